#![cfg(feature = "cluster-async")]
#[macro_use]
mod support;

#[cfg(test)]
mod cluster_async {
    use std::{
        collections::HashMap,
        num::NonZeroUsize,
        sync::{
            Arc, LazyLock,
            atomic::{self, AtomicBool, AtomicI32, AtomicU16, AtomicU32, Ordering},
        },
        time::Duration,
    };

    use futures::prelude::*;
    use futures_time::{future::FutureExt, task::sleep};

    use assert_matches::assert_matches;
    use redis::{
        AsyncCommands, Cmd, ErrorKind, InfoDict, IntoConnectionInfo, RedisError, RedisFuture,
        RedisResult, Script, ServerErrorKind, Value,
        aio::{ConnectionLike, MultiplexedConnection},
        cluster::ClusterClient,
        cluster_async::Connect,
        cluster_read_routing::{RandomReplicaStrategy, RoundRobinReplicaStrategy},
        cluster_routing::{
            MultipleNodeRoutingInfo, ResponsePolicy, Route, RoutingInfo, SingleNodeRoutingInfo,
            Slot, SlotAddr,
        },
        cmd, from_redis_value, parse_redis_value, pipe,
    };
    use redis::{PushInfo, PushKind, cluster_async::ClusterConnection};
    use redis_test::cluster::{RedisCluster, RedisClusterConfiguration};
    use redis_test::redis_value;
    use redis_test::server::use_protocol;
    use test_macros::async_test;
    use tokio::{join, sync::mpsc::UnboundedReceiver};

    use crate::support::*;

    async fn smoke_test_connection(mut connection: impl redis::aio::ConnectionLike) {
        cmd("SET")
            .arg("test")
            .arg("test_data")
            .exec_async(&mut connection)
            .await
            .expect("SET command should succeed");
        let res: String = cmd("GET")
            .arg("test")
            .clone()
            .query_async(&mut connection)
            .await
            .expect("GET command should succeed");
        assert_eq!(res, "test_data");
    }

    #[async_test]
    async fn test_async_cluster_basic_cmd() {
        let cluster = TestClusterContext::new();

        let connection = cluster.async_connection().await;
        smoke_test_connection(connection).await;
    }

    #[async_test]
    async fn test_async_cluster_numbered_database() {
        run_test_if_version_supported!(VALKEY_9_0);

        let cluster = TestClusterContext::new_with_config_and_builder(
            RedisClusterConfiguration {
                cluster_databases: Some(16),
                tls_insecure: false,
                ..Default::default()
            },
            |builder| builder.database_id(4),
        );

        let mut con = cluster.async_connection().await;

        assert_all_nodes_on_db(&mut con, 4).await;

        // Terminate the connections, verify that on reconnect we are still on db4.
        con.route_command(
            redis::cmd("QUIT"),
            RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllNodes, None)),
        )
        .await
        .unwrap();
        assert_all_nodes_on_db(&mut con, 4).await;
    }

    async fn assert_all_nodes_on_db(con: &mut ClusterConnection, expected_db: u32) {
        let value = con
            .route_command(
                cmd("CLIENT").arg("INFO").take(),
                RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllNodes, None)),
            )
            .await
            .unwrap();
        let client_info_results: HashMap<String, String> = from_redis_value(value).unwrap();
        assert!(
            !client_info_results.is_empty(),
            "expected CLIENT INFO from at least one node"
        );
        for (node, info) in &client_info_results {
            let db = info
                .split(' ')
                .find_map(|kv| kv.strip_prefix("db="))
                .unwrap_or_else(|| panic!("CLIENT INFO from {node} missing db field: {info}"));
            assert_eq!(
                db,
                expected_db.to_string(),
                "node {node} should be on db{expected_db}, got: {info}"
            );
        }
    }

    #[async_test]
    async fn test_no_response_skips_response_even_on_error() {
        let cluster = TestClusterContext::new();

        let mut connection = cluster.async_connection().await;
        redis::cmd("SET")
            .arg("key")
            .arg(b"foo")
            .set_no_response(true)
            .exec_async(&mut connection)
            .await
            .unwrap();

        // this should error, since we hset a string value, but we shouldn't receive the error, because we ignore the response
        redis::cmd("HSET")
            .arg("key")
            .arg(b"foo")
            .arg("bar")
            .set_no_response(true)
            .exec_async(&mut connection)
            .await
            .unwrap();

        let result = redis::cmd("GET")
            .arg("key")
            .query_async(&mut connection)
            .await;
        assert_eq!(result, Ok("foo".to_string()));
    }

    #[async_test]
    async fn test_reconnect_only_the_disconnected_node_leave_other_connections_intact() {
        // we remove retries in order to know that a request will fail immediately when discovering that a connection disconnected, instead of reconnecting and succeeding
        let ctx = TestClusterContext::new_with_cluster_client_builder(|builder| builder.retries(0));

        let first_node = ctx.cluster.servers[0]
            .host_and_port()
            .map(|(host, port)| {
                RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
                    host: host.into(),
                    port,
                })
            })
            .unwrap();
        let second_node = ctx.cluster.servers[1]
            .host_and_port()
            .map(|(host, port)| {
                RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
                    host: host.into(),
                    port,
                })
            })
            .unwrap();

        let mut connection = ctx.async_connection().await;
        connection
            .route_command(redis::cmd("quit"), first_node.clone())
            .await
            .unwrap();

        // expect the second node to work ok
        connection
            .route_command(redis::cmd("ping"), second_node.clone())
            .await
            .unwrap();

        // expect the first node to be disconnected
        let result = connection
            .route_command(redis::cmd("ping"), first_node)
            .await;

        // expect the second node to still work ok
        connection
            .route_command(redis::cmd("ping"), second_node)
            .await
            .unwrap();
        assert!(result.is_err_and(|err| err.is_unrecoverable_error()));
    }

    #[async_test]
    async fn test_async_cluster_basic_eval() {
        let cluster = TestClusterContext::new();

        let mut connection = cluster.async_connection().await;
        let res: String = cmd("EVAL")
            .arg(r#"redis.call("SET", KEYS[1], ARGV[1]); return redis.call("GET", KEYS[1])"#)
            .arg(1)
            .arg("key")
            .arg("test")
            .query_async(&mut connection)
            .await
            .unwrap();
        assert_eq!(res, "test");
    }

    #[async_test]
    async fn test_async_cluster_basic_script() {
        let cluster = TestClusterContext::new();

        let mut connection = cluster.async_connection().await;
        let res: String = Script::new(
            r#"redis.call("SET", KEYS[1], ARGV[1]); return redis.call("GET", KEYS[1])"#,
        )
        .key("key")
        .arg("test")
        .invoke_async(&mut connection)
        .await
        .unwrap();
        assert_eq!(res, "test");
    }

    #[async_test]
    async fn test_async_cluster_route_flush_to_specific_node() {
        let cluster = TestClusterContext::new();

        let mut connection = cluster.async_connection().await;
        let _: () = connection.set("foo", "bar").await.unwrap();
        let _: () = connection.set("bar", "foo").await.unwrap();

        let res: String = connection.get("foo").await.unwrap();
        assert_eq!(res, "bar".to_string());
        let res2: Option<String> = connection.get("bar").await.unwrap();
        assert_eq!(res2, Some("foo".to_string()));

        let route = Route::with_slot(Slot::new(1).unwrap(), SlotAddr::Master);
        let single_node_route = SingleNodeRoutingInfo::SpecificNode(route);
        let routing = RoutingInfo::SingleNode(single_node_route);
        assert_eq!(
            connection
                .route_command(redis::cmd("FLUSHALL"), routing)
                .await
                .unwrap(),
            Value::Okay
        );
        let res: String = connection.get("foo").await.unwrap();
        assert_eq!(res, "bar".to_string());
        let res2: Option<String> = connection.get("bar").await.unwrap();
        assert_eq!(res2, None);
    }

    #[async_test]
    async fn test_async_cluster_route_flush_to_node_by_address() {
        let cluster = TestClusterContext::new();

        let mut connection = cluster.async_connection().await;
        let mut cmd = redis::cmd("INFO");
        // The other sections change with time.
        // TODO - after we remove support of redis 6, we can add more than a single section - .arg("Persistence").arg("Memory").arg("Replication")
        cmd.arg("Clients");
        let value = connection
            .route_command(
                cmd.clone(),
                RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllNodes, None)),
            )
            .await
            .unwrap();

        let info_by_address = from_redis_value::<HashMap<String, String>>(value).unwrap();
        // find the info of the first returned node
        let (address, info) = info_by_address.into_iter().next().unwrap();
        let mut split_address = address.split(':');
        let host = split_address.next().unwrap().to_string();
        let port = split_address.next().unwrap().parse().unwrap();

        let value = connection
            .route_command(
                cmd.clone(),
                RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress { host, port }),
            )
            .await
            .unwrap();
        let new_info = from_redis_value::<String>(value).unwrap();

        assert_eq!(new_info, info);
    }

    #[async_test]
    async fn test_async_cluster_route_info_to_nodes() {
        let cluster = TestClusterContext::new_with_config(RedisClusterConfiguration {
            num_nodes: 6,
            num_replicas: 1,
            ..Default::default()
        });

        let split_to_addresses_and_info = |res| -> (Vec<String>, Vec<String>) {
            if let Value::Map(values) = res {
                let mut pairs: Vec<_> = values
                    .into_iter()
                    .map(|(key, value)| {
                        (
                            redis::from_redis_value_ref::<String>(&key).unwrap(),
                            redis::from_redis_value_ref::<String>(&value).unwrap(),
                        )
                    })
                    .collect();
                pairs.sort_by(|(address1, _), (address2, _)| address1.cmp(address2));
                pairs.into_iter().unzip()
            } else {
                unreachable!("{res:?}");
            }
        };

        let cluster_addresses: Vec<_> = cluster
            .cluster
            .servers
            .iter()
            .map(|server| server.connection_info())
            .collect();
        let client = ClusterClient::builder(cluster_addresses.clone())
            .read_routing_strategy(RandomReplicaStrategy)
            .build()
            .unwrap();
        let mut connection = client.get_async_connection().await.unwrap();

        let route_to_all_nodes = MultipleNodeRoutingInfo::AllNodes;
        let routing = RoutingInfo::MultiNode((route_to_all_nodes, None));
        let res = connection
            .route_command(redis::cmd("INFO"), routing)
            .await
            .unwrap();
        let (addresses, info) = split_to_addresses_and_info(res);

        let mut cluster_addresses: Vec<_> = cluster_addresses
            .into_iter()
            .map(|info| info.addr().to_string())
            .collect();
        cluster_addresses.sort();

        assert_eq!(addresses.len(), 6);
        assert_eq!(addresses, cluster_addresses);
        assert_eq!(info.len(), 6);
        for i in 0..6 {
            let split: Vec<_> = addresses[i].split(':').collect();
            assert!(info[i].contains(&format!("tcp_port:{}", split[1])));
        }

        let route_to_all_primaries = MultipleNodeRoutingInfo::AllMasters;
        let routing = RoutingInfo::MultiNode((route_to_all_primaries, None));
        let res = connection
            .route_command(redis::cmd("INFO"), routing)
            .await
            .unwrap();
        let (addresses, info) = split_to_addresses_and_info(res);
        assert_eq!(addresses.len(), 3);
        assert_eq!(info.len(), 3);
        // verify that all primaries have the correct port & host, and are marked as primaries.
        for i in 0..3 {
            assert!(cluster_addresses.contains(&addresses[i]));
            let split: Vec<_> = addresses[i].split(':').collect();
            assert!(info[i].contains(&format!("tcp_port:{}", split[1])));
            assert!(info[i].contains("role:primary") || info[i].contains("role:master"));
        }
    }

    #[async_test]
    async fn test_cluster_resp3() {
        if !use_protocol().supports_resp3() {
            return;
        }

        let cluster = TestClusterContext::new();

        let mut connection = cluster.async_connection().await;

        let _: () = connection.hset("hash", "foo", "baz").await.unwrap();
        let _: () = connection.hset("hash", "bar", "foobar").await.unwrap();
        let result: Value = connection.hgetall("hash").await.unwrap();

        assert_eq!(result, redis_value!({"foo": "baz", "bar": "foobar"}));
    }

    #[async_test]
    async fn test_async_cluster_basic_pipe() {
        let cluster = TestClusterContext::new();

        let mut connection = cluster.async_connection().await;
        let mut pipe = redis::pipe();
        pipe.add_command(cmd("SET").arg("test").arg("test_data").clone());
        pipe.add_command(cmd("SET").arg("{test}3").arg("test_data3").clone());
        pipe.exec_async(&mut connection).await.unwrap();
        let res: String = connection.get("test").await.unwrap();
        assert_eq!(res, "test_data");
        let res: String = connection.get("{test}3").await.unwrap();
        assert_eq!(res, "test_data3");
    }

    #[test]
    fn test_pipeline_returns_server_errors() {
        let name = "test_pipeline_returns_server_errors";

        let MockEnv {
            runtime,
            async_connection: mut connection,
            ..
        } = MockEnv::new(name, move |cmd, _| {
            respond_startup(name, cmd)?;
            if cmd
                == redis::cmd("SET")
                    .arg("{tag}x")
                    .arg("another-x-value")
                    .get_packed_command()
            {
                Err(Ok(parse_redis_value(b"-CROSSSLOT foobar\r\n").unwrap()))
            } else if cmd == redis::cmd("GET").arg("{tag}y").get_packed_command() {
                Err(Ok(Value::Okay))
            } else {
                panic!(
                    "unexpected cmd: {}",
                    String::from_utf8(cmd.to_vec()).unwrap()
                );
            }
        });

        let res = runtime.block_on(
            redis::pipe()
                .set("{tag}x", "another-x-value")
                .ignore()
                .get("{tag}y")
                .exec_async(&mut connection),
        );
        assert_eq!(res.unwrap_err().kind(), ServerErrorKind::CrossSlot.into());
    }

    #[async_test]
    async fn test_async_cluster_multi_shard_commands() {
        let cluster = TestClusterContext::new();

        let mut connection = cluster.async_connection().await;

        let res: String = connection
            .mset(&[("foo", "bar"), ("bar", "foo"), ("baz", "bazz")])
            .await
            .unwrap();
        assert_eq!(res, "OK");
        let res: Vec<String> = connection.mget(&["baz", "foo", "bar"]).await.unwrap();
        assert_eq!(res, vec!["bazz", "bar", "foo"]);
    }

    #[async_test]
    async fn test_async_cluster_can_run_a_transaction() {
        let cluster = TestClusterContext::new();

        let mut connection = cluster.async_connection().await;

        let result: Vec<Value> = redis::pipe()
            .atomic()
            .set("foo", b"bar")
            .expire("foo", 10)
            .query_async(&mut connection)
            .await
            .unwrap();

        assert_eq!(result, vec![Value::Okay, redis_value!(1)]);
    }

    #[cfg(feature = "tls-rustls")]
    #[async_test]
    async fn test_async_cluster_default_reject_invalid_hostnames() {
        use redis_test::cluster::ClusterType;

        if ClusterType::get_intended() != ClusterType::TcpTls {
            // Only TLS causes invalid certificates to be rejected as desired.
            return;
        }

        let cluster = TestClusterContext::new_with_config(RedisClusterConfiguration {
            tls_insecure: false,
            certs_with_ip_alts: false,
            ..Default::default()
        });

        assert!(cluster.client.get_async_connection().await.is_err());
    }

    #[cfg(feature = "tls-rustls-insecure")]
    #[async_test]
    async fn test_async_cluster_danger_accept_invalid_hostnames() {
        use redis_test::cluster::ClusterType;

        if ClusterType::get_intended() != ClusterType::TcpTls {
            // No point testing this TLS-specific mode in non-TLS configurations.
            return;
        }

        let cluster = TestClusterContext::new_with_config_and_builder(
            RedisClusterConfiguration {
                tls_insecure: false,
                certs_with_ip_alts: false,
                ..Default::default()
            },
            |builder| builder.danger_accept_invalid_hostnames(true),
        );

        let connection = cluster.async_connection().await;
        smoke_test_connection(connection).await;
    }

    #[cfg(feature = "tls-rustls")]
    #[async_test]
    async fn async_cluster_node_address_map_fixes_tls_hostname_mismatch() {
        use redis_test::cluster::ClusterType;

        if ClusterType::get_intended() != ClusterType::TcpTls {
            return;
        }

        // Certs issued for "localhost" only (no IP SAN), so connecting via
        // 127.0.0.1 will fail TLS verification without node_address_map.
        let cluster = TestClusterContext::new_with_config(RedisClusterConfiguration {
            tls_insecure: false,
            certs_with_ip_alts: false,
            dns_hostname: Some("localhost".to_string()),
            ..Default::default()
        });

        let err = match cluster.client.get_async_connection().await {
            Ok(_) => panic!("connecting via IP address should fail TLS hostname verification"),
            Err(err) => err,
        };
        assert!(
            err.is_io_error(),
            "expected a TLS/IO error from hostname verification failure, got: {err:?}"
        );
        let err_string = err.to_string();
        assert!(
            err_string.contains("certificate") || err_string.contains("NotValidForName"),
            "expected a certificate hostname verification error, got: {err_string}"
        );

        let mut address_map = HashMap::new();
        for server in cluster.cluster.iter_servers() {
            if let Some((host, port)) = server.host_and_port() {
                address_map.insert(
                    redis::cluster::NodeAddress::new(host, port),
                    redis::cluster::NodeAddress::new("localhost", port),
                );
            }
        }

        let initial_nodes: Vec<redis::ConnectionInfo> = cluster
            .cluster
            .iter_servers()
            .map(|s| s.connection_info())
            .collect();

        let mut builder = ClusterClient::builder(initial_nodes)
            .use_protocol(use_protocol())
            .node_address_map(address_map);

        if let Some(tls_file_paths) = &cluster.cluster.tls_paths {
            builder = builder.certs(load_certs_from_file(tls_file_paths));
        }

        let client = builder.build().unwrap();
        let connection = client.get_async_connection().await.unwrap();
        smoke_test_connection(connection).await;
    }

    #[async_test]
    async fn test_async_cluster_basic_failover() {
        test_failover(
                &TestClusterContext::new_with_config(
                    RedisClusterConfiguration::single_replica_config(),
                ),
                10,
                123,
                false,
            )
            .await;
    }

    async fn do_failover(
        redis: &mut redis::aio::MultiplexedConnection,
    ) -> Result<(), anyhow::Error> {
        Ok(cmd("CLUSTER").arg("FAILOVER").exec_async(redis).await?)
    }

    // parameter `_mtls_enabled` can only be used if `feature = tls-rustls` is active
    async fn test_failover(
        env: &TestClusterContext,
        requests: i32,
        value: i32,
        _mtls_enabled: bool,
    ) {
        let completed = Arc::new(AtomicI32::new(0));

        let connection = env.async_connection().await;
        let mut node_conns: Vec<MultiplexedConnection> = Vec::new();

        'outer: loop {
            node_conns.clear();
            let cleared_nodes = async {
                for server in env.cluster.iter_servers() {
                    let addr = server.client_addr();

                    let client = build_single_client(
                        server.connection_info(),
                        &server.tls_paths,
                        _mtls_enabled,
                    )
                    .unwrap_or_else(|e| panic!("Failed to connect to '{addr}': {e}"));

                    let mut conn = client
                        .get_multiplexed_async_connection()
                        .await
                        .unwrap_or_else(|e| panic!("Failed to get connection: {e}"));

                    let info: InfoDict = redis::Cmd::new()
                        .arg("INFO")
                        .query_async(&mut conn)
                        .await
                        .expect("INFO");
                    let role: String = info.get("role").expect("cluster role");

                    if role == "master" {
                        async { Ok(conn.flushall::<()>().await?) }
                            .timeout(futures_time::time::Duration::from_secs(3))
                            .await
                            .unwrap_or_else(|err| Err(anyhow::Error::from(err)))
                            .unwrap();
                    }

                    node_conns.push(conn);
                }
                Ok::<(), anyhow::Error>(())
            }
            .await;
            match cleared_nodes {
                Ok(()) => break 'outer,
                Err(err) => {
                    // Failed to clear the databases, retry
                    log::warn!("{err}");
                }
            }
        }

        let _: () = (0..requests + 1)
            .map(|i| {
                let mut connection = connection.clone();
                let mut node_conns = node_conns.clone();
                let completed = completed.clone();
                async move {
                    if i == requests / 2 {
                        // Failover all the nodes, error only if all the failover requests error
                        let mut results = future::join_all(
                            node_conns
                                .iter_mut()
                                .map(|conn| Box::pin(do_failover(conn))),
                        )
                        .await;
                        if results.iter().all(|res| res.is_err()) {
                            results.pop().unwrap()
                        } else {
                            Ok::<_, anyhow::Error>(())
                        }
                    } else {
                        let key = format!("test-{value}-{i}");
                        let res: Vec<i32> = pipe()
                            .set(key.clone(), i)
                            .ignore()
                            .get(key)
                            .query_async(&mut connection)
                            .await
                            .unwrap();
                        assert_eq!(res, &[i]);
                        completed.fetch_add(1, Ordering::SeqCst);
                        Ok::<_, anyhow::Error>(())
                    }
                }
            })
            .collect::<stream::FuturesUnordered<_>>()
            .try_collect()
            .await
            .unwrap_or_else(|e| panic!("{e}"));

        assert_eq!(
            completed.load(Ordering::SeqCst),
            requests,
            "Some requests never completed!"
        );
    }

    static ERROR: LazyLock<AtomicBool> = LazyLock::new(Default::default);

    #[derive(Clone)]
    struct ErrorConnection {
        inner: MultiplexedConnection,
    }

    impl Connect for ErrorConnection {
        fn connect_with_config<'a, T>(
            info: T,
            config: redis::AsyncConnectionConfig,
        ) -> RedisFuture<'a, Self>
        where
            T: IntoConnectionInfo + Send + 'a,
        {
            Box::pin(async move {
                let inner = MultiplexedConnection::connect_with_config(info, config)
                    .await
                    .unwrap();
                Ok(Self { inner })
            })
        }
    }

    impl ConnectionLike for ErrorConnection {
        fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
            if ERROR.load(Ordering::SeqCst) {
                Box::pin(async move {
                    Err(RedisError::from((
                        redis::ServerErrorKind::Moved.into(),
                        "ERROR",
                    )))
                })
            } else {
                self.inner.req_packed_command(cmd)
            }
        }

        fn req_packed_commands<'a>(
            &'a mut self,
            pipeline: &'a redis::Pipeline,
            offset: usize,
            count: usize,
        ) -> RedisFuture<'a, Vec<Value>> {
            self.inner.req_packed_commands(pipeline, offset, count)
        }

        fn get_db(&self) -> i64 {
            self.inner.get_db()
        }
    }

    #[async_test]
    async fn test_async_cluster_error_in_inner_connection() {
        let cluster = TestClusterContext::new();

        let mut con = cluster.async_generic_connection::<ErrorConnection>().await;

        ERROR.store(false, Ordering::SeqCst);
        let r: Option<i32> = con.get("test").await.unwrap();
        assert_eq!(r, None::<i32>);

        ERROR.store(true, Ordering::SeqCst);

        let result: RedisResult<()> = con.get("test").await;
        assert_eq!(
            result,
            Err(RedisError::from((
                redis::ServerErrorKind::Moved.into(),
                "ERROR"
            )))
        );
    }

    #[test]
    fn test_cluster_async_can_connect_to_server_that_sends_cluster_slots_with_null_host_name() {
        let name =
            "test_cluster_async_can_connect_to_server_that_sends_cluster_slots_with_null_host_name";

        let MockEnv {
            runtime,
            async_connection: mut connection,
            ..
        } = MockEnv::new(name, move |cmd: &[u8], _| {
            if is_connection_check(cmd) {
                Err(Ok(redis_value!(simple:"OK")))
            } else if contains_slice(cmd, b"CLUSTER") && contains_slice(cmd, b"SLOTS") {
                Err(Ok(redis_value!([[0, 16383, [nil, 6379]]])))
            } else {
                Err(Ok(Value::Nil))
            }
        });

        let value = runtime.block_on(cmd("GET").arg("test").query_async::<Value>(&mut connection));

        assert_eq!(value, Ok(Value::Nil));
    }

    #[test]
    fn test_cluster_async_can_connect_to_server_that_sends_cluster_slots_with_partial_nodes_with_unknown_host_name()
     {
        let name = "test_cluster_async_can_connect_to_server_that_sends_cluster_slots_with_partial_nodes_with_unknown_host_name";

        let MockEnv {
            runtime,
            async_connection: mut connection,
            ..
        } = MockEnv::new(name, move |cmd: &[u8], _| {
            if is_connection_check(cmd) {
                Err(Ok(redis_value!(simple:"OK")))
            } else if contains_slice(cmd, b"CLUSTER") && contains_slice(cmd, b"SLOTS") {
                Err(Ok(redis_value!([
                    [0, 7000, [name, 6379]],
                    [7001, 16383, ["?", 6380]]
                ])))
            } else {
                Err(Ok(Value::Nil))
            }
        });

        let value = runtime.block_on(cmd("GET").arg("test").query_async::<Value>(&mut connection));

        assert_eq!(value, Ok(Value::Nil));
    }

    // Without a read-routing policy we must never send READONLY, since
    // some Redis providers (e.g. Azure Managed Redis) reject it.
    #[test]
    fn test_async_cluster_without_read_routing_does_not_send_readonly() {
        let name = "test_async_cluster_without_read_routing_does_not_send_readonly";

        let ping_sent = Arc::new(AtomicBool::new(false));
        {
            let ping_sent_clone = ping_sent.clone();
            let MockEnv {
                runtime,
                async_connection: mut connection,
                ..
            } = MockEnv::new(name, move |cmd: &[u8], _| {
                assert!(!contains_slice(cmd, b"READONLY"));

                if contains_slice(cmd, b"PING") {
                    ping_sent_clone.store(true, Ordering::SeqCst);
                }
                respond_startup(name, cmd)?;
                Err(Ok(Value::Nil))
            });

            let value =
                runtime.block_on(cmd("GET").arg("test").query_async::<Value>(&mut connection));
            assert_eq!(value, Ok(Value::Nil));
        }

        assert!(ping_sent.load(Ordering::SeqCst));
    }

    #[test]
    fn test_async_cluster_with_read_routing_sends_readonly() {
        let name = "test_async_cluster_with_read_routing_sends_readonly";

        let readonly_sent = Arc::new(AtomicBool::new(false));
        {
            let readonly_sent_clone = readonly_sent.clone();
            let MockEnv {
                runtime,
                async_connection: mut connection,
                handler: _handler,
                ..
            } = MockEnv::with_client_builder(
                ClusterClient::builder(vec![&*format!("redis://{name}")])
                    .retries(0)
                    .read_routing_strategy(RandomReplicaStrategy),
                name,
                move |cmd: &[u8], _| {
                    if contains_slice(cmd, b"READONLY") {
                        readonly_sent_clone.store(true, Ordering::SeqCst);
                    }
                    respond_startup(name, cmd)?;
                    Err(Ok(Value::Nil))
                },
            );

            let value =
                runtime.block_on(cmd("GET").arg("test").query_async::<Value>(&mut connection));
            assert_eq!(value, Ok(Value::Nil));
        }

        assert!(
            readonly_sent.load(Ordering::SeqCst),
            "READONLY should be sent when read routing is enabled"
        );
    }

    #[test]
    fn test_async_cluster_retries() {
        let name = "tryagain";

        let requests = atomic::AtomicUsize::new(0);
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")]).retries(5),
            name,
            move |cmd: &[u8], _| {
                respond_startup(name, cmd)?;

                match requests.fetch_add(1, atomic::Ordering::SeqCst) {
                    0..=4 => Err(parse_redis_value(b"-TRYAGAIN mock\r\n")),
                    _ => Err(Ok(redis_value!("123"))),
                }
            },
        );

        let value = runtime.block_on(
            cmd("GET")
                .arg("test")
                .query_async::<Option<i32>>(&mut connection),
        );

        assert_eq!(value, Ok(Some(123)));
    }

    #[test]
    fn test_async_cluster_readonly_error_refreshes_slots_and_retries() {
        // Simulates a failover: a write lands on a node that has been demoted to a replica,
        // which returns READONLY. The client should refresh its (stale) slot map and retry
        // against the slot's new owner, rather than surfacing the error.
        let name = "readonly_refreshes_slots";

        let requests = atomic::AtomicUsize::new(0);
        let started = atomic::AtomicBool::new(false);
        let refreshed = Arc::new(atomic::AtomicBool::new(false));
        let refreshed_clone = refreshed.clone();

        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::new(name, move |cmd: &[u8], port| {
            if !started.load(atomic::Ordering::SeqCst) {
                respond_startup(name, cmd)?;
            }
            started.store(true, atomic::Ordering::SeqCst);

            if is_connection_check(cmd) {
                return Err(Ok(redis_value!(simple:"OK")));
            }

            let i = requests.fetch_add(1, atomic::Ordering::SeqCst);

            match i {
                // The write hits the demoted (now read-only) node.
                0 => Err(parse_redis_value(
                    b"-READONLY You can't write against a read only replica.\r\n",
                )),
                _ => {
                    if contains_slice(cmd, b"CLUSTER") && contains_slice(cmd, b"SLOTS") {
                        // The READONLY error should trigger exactly one slot refresh.
                        assert!(!refreshed.swap(true, Ordering::SeqCst));
                        Err(Ok(redis_value!([
                            [0, 1, [name, 6379]],
                            [2, 16383, [name, 6380]]
                        ])))
                    } else {
                        // After refreshing, the slot's owner is the newly promoted primary.
                        assert_eq!(port, 6380);
                        assert!(
                            contains_slice(cmd, b"SET"),
                            "{:?}",
                            std::str::from_utf8(cmd)
                        );
                        Err(Ok(Value::Okay))
                    }
                }
            }
        });

        let value = runtime.block_on(
            cmd("SET")
                .arg("test")
                .arg("value")
                .query_async::<Value>(&mut connection),
        );

        assert_eq!(value, Ok(Value::Okay));
        assert!(
            refreshed_clone.load(Ordering::SeqCst),
            "slots should be refreshed"
        );
    }

    #[test]
    fn test_async_cluster_tryagain_exhaust_retries() {
        let name = "tryagain_exhaust_retries";

        let requests = Arc::new(atomic::AtomicUsize::new(0));

        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")]).retries(2),
            name,
            {
                let requests = requests.clone();
                move |cmd: &[u8], _| {
                    respond_startup(name, cmd)?;
                    requests.fetch_add(1, atomic::Ordering::SeqCst);
                    Err(parse_redis_value(b"-TRYAGAIN mock\r\n"))
                }
            },
        );

        let result = runtime.block_on(
            cmd("GET")
                .arg("test")
                .query_async::<Option<i32>>(&mut connection),
        );

        assert!(
            matches!(&result, Err(err) if err.kind() == ServerErrorKind::TryAgain.into()),
            "{result:?}",
        );
        assert_eq!(requests.load(atomic::Ordering::SeqCst), 3);
    }

    #[test]
    fn test_async_cluster_move_error_when_new_node_is_added() {
        let name = "rebuild_with_extra_nodes";

        let requests = atomic::AtomicUsize::new(0);
        let started = atomic::AtomicBool::new(false);
        let refreshed = atomic::AtomicBool::new(false);

        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::new(name, move |cmd: &[u8], port| {
            if !started.load(atomic::Ordering::SeqCst) {
                respond_startup(name, cmd)?;
            }
            started.store(true, atomic::Ordering::SeqCst);

            if is_connection_check(cmd) {
                return Err(Ok(redis_value!(simple:"OK")));
            }

            let i = requests.fetch_add(1, atomic::Ordering::SeqCst);

            let is_get_cmd = contains_slice(cmd, b"GET");
            let get_response = Err(Ok(redis_value!("123")));
            match i {
                // Respond that the key exists on a node that does not yet have a connection:
                0 => Err(parse_redis_value(
                    format!("-MOVED 123 {name}:6380\r\n").as_bytes(),
                )),
                _ => {
                    if contains_slice(cmd, b"CLUSTER") && contains_slice(cmd, b"SLOTS") {
                        // Should not attempt to refresh slots more than once:
                        assert!(!refreshed.swap(true, Ordering::SeqCst));
                        Err(Ok(redis_value!([
                            [0, 1, [name, 6379]],
                            [2, 16383, [name, 6380]]
                        ])))
                    } else {
                        assert_eq!(port, 6380);
                        assert!(is_get_cmd, "{:?}", std::str::from_utf8(cmd));
                        get_response
                    }
                }
            }
        });

        let value = runtime.block_on(
            cmd("GET")
                .arg("test")
                .query_async::<Option<i32>>(&mut connection),
        );

        assert_eq!(value, Ok(Some(123)));
    }

    #[test]
    fn test_async_cluster_refresh_topology_even_with_zero_retries() {
        let name = "test_async_cluster_refresh_topology_even_with_zero_retries";

        let should_refresh = atomic::AtomicBool::new(false);

        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")]).retries(0),
            name,
            move |cmd: &[u8], port| {
                if !should_refresh.load(atomic::Ordering::SeqCst) {
                    respond_startup(name, cmd)?;
                }

                if is_connection_check(cmd) {
                    return Err(Ok(redis_value!(simple:"OK")));
                }

                if contains_slice(cmd, b"CLUSTER") && contains_slice(cmd, b"SLOTS") {
                    return Err(Ok(redis_value!([
                        [0, 1, [name, 6379]],
                        [2, 16383, [name, 6380]]
                    ])));
                }

                if contains_slice(cmd, b"GET") {
                    let get_response = Err(Ok(redis_value!("123")));
                    match port {
                        6380 => get_response,
                        // Respond that the key exists on a node that does not yet have a connection:
                        _ => {
                            // Should not attempt to refresh slots more than once:
                            assert!(!should_refresh.swap(true, Ordering::SeqCst));
                            Err(parse_redis_value(
                                format!("-MOVED 123 {name}:6380\r\n").as_bytes(),
                            ))
                        }
                    }
                } else {
                    panic!("unexpected command {cmd:?}")
                }
            },
        );

        let value = runtime.block_on(cmd("GET").arg("test").query_async::<Value>(&mut connection));

        // The user should receive an initial error, because there are no retries and the first request failed.
        assert_eq!(
            value,
            parse_redis_value(
                b"-MOVED 123 test_async_cluster_refresh_topology_even_with_zero_retries:6380\r\n"
            )
            .unwrap()
            .extract_error()
        );

        let value = runtime.block_on(
            cmd("GET")
                .arg("test")
                .query_async::<Option<i32>>(&mut connection),
        );

        assert_eq!(value, Ok(Some(123)));
    }

    #[test]
    fn test_async_cluster_reconnect_even_with_zero_retries() {
        let name = "test_async_cluster_reconnect_even_with_zero_retries";

        let should_reconnect = atomic::AtomicBool::new(true);
        let connection_count = Arc::new(atomic::AtomicU16::new(0));
        let connection_count_clone = connection_count.clone();

        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")]).retries(0),
            name,
            move |cmd: &[u8], port| {
                match respond_startup(name, cmd) {
                    Ok(_) => {}
                    Err(err) => {
                        connection_count.fetch_add(1, Ordering::Relaxed);
                        return Err(err);
                    }
                }

                if contains_slice(cmd, b"ECHO") && port == 6379 {
                    // Should not attempt to refresh slots more than once:
                    if should_reconnect.swap(false, Ordering::SeqCst) {
                        Err(Err(broken_pipe_error()))
                    } else {
                        Err(Ok(redis_value!("PONG")))
                    }
                } else {
                    panic!("unexpected command {cmd:?}")
                }
            },
        );

        // 5 - MockEnv creates sync & async connections. Each calls CLUSTER SLOTS once and
        // READONLY per node during connect. The sync connection sends an additional READONLY
        // in its connect() method.
        assert_eq!(connection_count_clone.load(Ordering::Relaxed), 5);

        let value = runtime.block_on(connection.route_command(
            cmd("ECHO"),
            RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
                host: name.to_string(),
                port: 6379,
            }),
        ));

        // The user should receive an initial error, because there are no retries and the first request failed.
        assert_eq!(
            value.unwrap_err().to_string(),
            broken_pipe_error().to_string()
        );

        let value = runtime.block_on(connection.route_command(
            cmd("ECHO"),
            RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
                host: name.to_string(),
                port: 6379,
            }),
        ));

        assert_eq!(value, Ok(redis_value!("PONG")));
        // 6 - because of the 5 above, and then another READONLY for the new connection.
        assert_eq!(connection_count_clone.load(Ordering::Relaxed), 6);
    }

    #[test]
    fn test_async_cluster_ask_redirect() {
        let name = "test_async_cluster_ask_redirect";
        let completed = Arc::new(AtomicI32::new(0));
        let MockEnv {
            async_connection: mut connection,
            handler: _handler,
            runtime,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")]),
            name,
            {
                move |cmd: &[u8], port| {
                    respond_startup_two_nodes(name, cmd)?;
                    // Error twice with io-error, ensure connection is reestablished w/out calling
                    // other node (i.e., not doing a full slot rebuild)
                    let count = completed.fetch_add(1, Ordering::SeqCst);
                    match port {
                        6379 => match count {
                            0 => Err(parse_redis_value(
                                b"-ASK 14000 test_async_cluster_ask_redirect:6380\r\n",
                            )),
                            _ => panic!("Node should not be called now"),
                        },
                        6380 => match count {
                            1 => {
                                assert!(contains_slice(cmd, b"ASKING"));
                                Err(Ok(Value::Okay))
                            }
                            2 => {
                                assert!(contains_slice(cmd, b"GET"));
                                Err(Ok(redis_value!("123")))
                            }
                            _ => panic!("Node should not be called now"),
                        },
                        _ => panic!("Wrong node"),
                    }
                }
            },
        );

        let value = runtime.block_on(
            cmd("GET")
                .arg("test")
                .query_async::<Option<i32>>(&mut connection),
        );

        assert_eq!(value, Ok(Some(123)));
    }

    #[test]
    fn async_ask_redirect_propagates_asking_failure() {
        let name = "async_ask_redirect_propagates_asking_failure";
        let redirected_command_sent = Arc::new(AtomicBool::new(false));
        let redirected_command_sent_in_handler = Arc::clone(&redirected_command_sent);

        let MockEnv {
            runtime,
            async_connection: mut connection,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")]).retries(0),
            name,
            move |cmd, port| {
                respond_startup(name, cmd)?;

                match port {
                    6379 if contains_slice(cmd, b"GET") => Err(Ok(parse_redis_value(
                        format!("-ASK 123 {name}:6380\r\n").as_bytes(),
                    )
                    .unwrap())),
                    6380 if contains_slice(cmd, b"ASKING") => {
                        Err(Ok(parse_redis_value(b"-ERR ASKING failed\r\n").unwrap()))
                    }
                    6380 if contains_slice(cmd, b"GET") => {
                        redirected_command_sent_in_handler.store(true, Ordering::SeqCst);
                        Err(Ok(Value::BulkString(b"unexpected-success".to_vec())))
                    }
                    _ => panic!(
                        "unexpected command on port {port}: {}",
                        String::from_utf8_lossy(cmd)
                    ),
                }
            },
        );

        // An ASKING failure must abort the redirect before the original command is sent.
        let result = runtime.block_on(
            redis::cmd("GET")
                .arg("key")
                .query_async::<String>(&mut connection),
        );

        assert!(result.is_err(), "ASKING failure must be propagated");
        assert!(
            !redirected_command_sent.load(Ordering::SeqCst),
            "the redirected command must not be sent when ASKING fails"
        );
    }

    #[test]
    fn test_async_cluster_ask_save_new_connection() {
        let name = "test_async_cluster_ask_save_new_connection";
        let ping_attempts = Arc::new(AtomicI32::new(0));
        let ping_attempts_clone = ping_attempts.clone();
        let MockEnv {
            async_connection: mut connection,
            handler: _handler,
            runtime,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")]),
            name,
            {
                move |cmd: &[u8], port| {
                    if port != 6391 {
                        respond_startup_two_nodes(name, cmd)?;
                        return Err(parse_redis_value(
                            b"-ASK 14000 test_async_cluster_ask_save_new_connection:6391\r\n",
                        ));
                    }

                    if is_connection_check(cmd) {
                        ping_attempts_clone.fetch_add(1, Ordering::Relaxed);
                    }
                    respond_startup_two_nodes(name, cmd)?;
                    Err(Ok(Value::Okay))
                }
            },
        );

        for _ in 0..4 {
            runtime
                .block_on(cmd("GET").arg("test").query_async::<Value>(&mut connection))
                .unwrap();
        }

        assert_eq!(ping_attempts.load(Ordering::Relaxed), 1);
    }

    // This is a test to prevent a regression from a deadlock seen from https://github.com/redis-rs/redis-rs/issues/2418.
    // The test does a number of GET commands with random start times where some run into MOVED and some run into a connection error.
    // Random delays are added to each command's response so that we get a mix of MOVED/connection_errors interleaved together.
    #[test]
    fn test_async_cluster_requests_complete_while_refreshes_and_reconnects_overlap() {
        use rand::{RngExt, SeedableRng, rngs::StdRng};

        const REQUESTS: usize = 100;
        // Each seed is a different interleaving; not every one hits the deadlock, so run several.
        const SEEDS: u64 = 10;
        let name = "test_async_cluster_requests_complete_while_refreshes_and_reconnects_overlap";
        for seed in 0..SEEDS {
            let rng = Arc::new(std::sync::Mutex::new(StdRng::seed_from_u64(seed)));
            let MockEnv {
                async_connection: connection,
                handler: _handler,
                runtime,
                ..
            } = MockEnv::with_client_builder(
                ClusterClient::builder(vec![&*format!("redis://{name}")]),
                name,
                {
                    let rng = rng.clone();
                    move |cmd: &[u8], port| {
                        respond_startup_two_nodes(name, cmd)?;
                        // 5061 -> slot of {bar} (owned by 6379)
                        // 12182 -> slot of {foo} (owned by 6380)
                        let (slot, owner) = if contains_slice(cmd, b"{foo}") {
                            (12182, 6380)
                        } else {
                            (5061, 6379)
                        };
                        let moved = || {
                            parse_redis_value(
                                format!("-MOVED {slot} {name}:{owner}\r\n").as_bytes(),
                            )
                        };

                        if port != owner {
                            return Err(moved());
                        }

                        match rng.lock().unwrap().random_range(0..10) {
                            // A MOVED to the node that already owns the slot: only starts a refresh.
                            0 => Err(moved()),
                            1 => Err(Err(broken_pipe_error())),
                            _ => Err(Ok(Value::BulkString(b"value".to_vec()))),
                        }
                    }
                },
            );

            add_mock_delay(name, {
                let rng = rng.clone();
                move |_, _| Duration::from_millis(rng.lock().unwrap().random_range(0..50))
            });

            let completed = runtime.block_on(async move {
                tokio::time::pause();
                let tasks: Vec<_> = (0..REQUESTS)
                    .map(|i| {
                        let start = Duration::from_millis(rng.lock().unwrap().random_range(0..500));
                        // {foo} hashes to node 6380, {bar} to node 6379.
                        let key = if i % 2 == 0 {
                            format!("{{foo}}{i}")
                        } else {
                            format!("{{bar}}{i}")
                        };
                        let mut connection = connection.clone();
                        tokio::spawn(async move {
                            tokio::time::sleep(start).await;
                            cmd("GET")
                                .arg(key)
                                .query_async::<Value>(&mut connection)
                                .await
                        })
                    })
                    .collect();
                tokio::time::timeout(Duration::from_secs(600), futures::future::join_all(tasks))
                    .await
            });
            assert!(
                completed.is_ok(),
                "seed {seed}: some requests never completed; the cluster connection is stuck"
            );
        }
    }

    #[test]
    fn test_async_cluster_reset_routing_if_redirect_fails() {
        let name = "test_async_cluster_reset_routing_if_redirect_fails";
        let completed = Arc::new(AtomicI32::new(0));
        let MockEnv {
            async_connection: mut connection,
            handler: _handler,
            runtime,
            ..
        } = MockEnv::new(name, move |cmd: &[u8], port| {
            if port != 6379 && port != 6380 {
                return Err(Err(broken_pipe_error()));
            }
            respond_startup_two_nodes(name, cmd)?;
            let count = completed.fetch_add(1, Ordering::SeqCst);
            match (port, count) {
                // redirect once to non-existing node
                (6379, 0) => Err(parse_redis_value(
                    format!("-ASK 14000 {name}:9999\r\n").as_bytes(),
                )),
                // accept the next request
                (6379, 1) => {
                    assert!(contains_slice(cmd, b"GET"));
                    Err(Ok(redis_value!("123")))
                }
                _ => panic!("Wrong node. port: {port}, received count: {count}"),
            }
        });

        let value = runtime.block_on(
            cmd("GET")
                .arg("test")
                .query_async::<Option<i32>>(&mut connection),
        );

        assert_eq!(value, Ok(Some(123)));
    }

    #[test]
    fn test_async_cluster_ask_redirect_even_if_original_call_had_no_route() {
        let name = "test_async_cluster_ask_redirect_even_if_original_call_had_no_route";
        let completed = Arc::new(AtomicI32::new(0));
        let MockEnv {
            async_connection: mut connection,
            handler: _handler,
            runtime,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")]),
            name,
            {
                move |cmd: &[u8], port| {
                    respond_startup_two_nodes(name, cmd)?;
                    // Error twice with io-error, ensure connection is reestablished w/out calling
                    // other node (i.e., not doing a full slot rebuild)
                    let count = completed.fetch_add(1, Ordering::SeqCst);
                    if count == 0 {
                        return Err(parse_redis_value(b"-ASK 14000 test_async_cluster_ask_redirect_even_if_original_call_had_no_route:6380\r\n"));
                    }
                    match port {
                        6380 => match count {
                            1 => {
                                assert!(
                                    contains_slice(cmd, b"ASKING"),
                                    "{:?}",
                                    std::str::from_utf8(cmd)
                                );
                                Err(Ok(Value::Okay))
                            }
                            2 => {
                                assert!(contains_slice(cmd, b"EVAL"));
                                Err(Ok(Value::Okay))
                            }
                            _ => panic!("Node should not be called now"),
                        },
                        _ => panic!("Wrong node"),
                    }
                }
            },
        );

        let value = runtime.block_on(
            cmd("EVAL") // Eval command has no directed, and so is redirected randomly
                .query_async::<Value>(&mut connection),
        );

        assert_eq!(value, Ok(Value::Okay));
    }

    #[test]
    fn test_async_cluster_ask_error_when_new_node_is_added() {
        let name = "ask_with_extra_nodes";

        let requests = atomic::AtomicUsize::new(0);
        let started = atomic::AtomicBool::new(false);

        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::new(name, move |cmd: &[u8], port| {
            if !started.load(atomic::Ordering::SeqCst) {
                respond_startup(name, cmd)?;
            }
            started.store(true, atomic::Ordering::SeqCst);

            if is_connection_check(cmd) {
                return Err(Ok(redis_value!(simple:"OK")));
            }

            let i = requests.fetch_add(1, atomic::Ordering::SeqCst);

            match i {
                // Respond that the key exists on a node that does not yet have a connection:
                0 => Err(parse_redis_value(
                    format!("-ASK 123 {name}:6380\r\n").as_bytes(),
                )),
                1 => {
                    assert_eq!(port, 6380);
                    assert!(contains_slice(cmd, b"ASKING"));
                    Err(Ok(Value::Okay))
                }
                2 => {
                    assert_eq!(port, 6380);
                    assert!(contains_slice(cmd, b"GET"));
                    Err(Ok(redis_value!("123")))
                }
                _ => {
                    panic!("Unexpected request: {cmd:?}");
                }
            }
        });

        let value = runtime.block_on(
            cmd("GET")
                .arg("test")
                .query_async::<Option<i32>>(&mut connection),
        );

        assert_eq!(value, Ok(Some(123)));
    }

    #[test]
    fn test_async_cluster_random_replica_read() {
        let name = "test_async_cluster_random_replica_read";

        // requests should route to replica
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            move |cmd: &[u8], port| {
                respond_startup_with_replica(name, cmd)?;
                match port {
                    6380 => Err(Ok(redis_value!("123"))),
                    _ => panic!("Wrong node"),
                }
            },
        );

        let value = runtime.block_on(
            cmd("GET")
                .arg("test")
                .query_async::<Option<i32>>(&mut connection),
        );
        assert_eq!(value, Ok(Some(123)));

        // requests should route to primary
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            move |cmd: &[u8], port| {
                respond_startup_with_replica(name, cmd)?;
                match port {
                    6379 => Err(Ok(redis_value!(simple:"OK"))),
                    _ => panic!("Wrong node"),
                }
            },
        );

        let value = runtime.block_on(
            cmd("SET")
                .arg("test")
                .arg("123")
                .query_async::<Option<Value>>(&mut connection),
        );
        assert_eq!(value, Ok(Some(redis_value!(simple:"OK"))));
    }

    #[test]
    fn test_async_cluster_round_robin_read() {
        let name = "test_async_cluster_round_robin_read";
        let ports = Arc::new(std::sync::Mutex::new(Vec::new()));
        let ports_clone = ports.clone();

        // Two shards, each with two replicas.
        // Shard 1 (slots 0..8192):    primary 6379, replicas 6380, 6381
        // Shard 2 (slots 8192..16384): primary 6382, replicas 6383, 6384
        let slots_config = vec![
            MockSlotRange {
                primary_port: 6379,
                replica_ports: vec![6380, 6381],
                slot_range: 0..8192,
            },
            MockSlotRange {
                primary_port: 6382,
                replica_ports: vec![6383, 6384],
                slot_range: 8192..16384,
            },
        ];

        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .read_routing_strategy(RoundRobinReplicaStrategy::new()),
            name,
            move |cmd: &[u8], port| {
                respond_startup_with_replica_using_config(name, cmd, Some(slots_config.clone()))?;
                if contains_slice(cmd, b"GET") {
                    ports_clone.lock().unwrap().push(port);
                    return Err(Ok(redis_value!("123")));
                }
                Ok(())
            },
        );

        // "test" hashes to slot 6918 → shard 1 (replicas 6380, 6381).
        // "{foo}test" hashes to slot 12182 → shard 2 (replicas 6383, 6384).
        // Interleave reads across both shards and verify each shard
        // round-robins independently.
        for key in [
            "test",
            "{foo}test",
            "test",
            "{foo}test",
            "test",
            "{foo}test",
        ] {
            let _: Option<i32> = runtime
                .block_on(cmd("GET").arg(key).query_async(&mut connection))
                .unwrap();
        }

        let recorded = ports.lock().unwrap().clone();
        assert_eq!(recorded, vec![6380, 6383, 6381, 6384, 6380, 6383]);
    }

    fn test_async_cluster_fan_out(
        name: &'static str,
        command: &'static str,
        expected_ports: Vec<u16>,
        slots_config: Option<Vec<MockSlotRange>>,
    ) {
        let found_ports = Arc::new(std::sync::Mutex::new(Vec::new()));
        let ports_clone = found_ports.clone();
        let mut cmd = Cmd::new();
        for arg in command.split_whitespace() {
            cmd.arg(arg);
        }
        let packed_cmd = cmd.get_packed_command();
        // requests should route to replica
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            move |received_cmd: &[u8], port| {
                respond_startup_with_replica_using_config(
                    name,
                    received_cmd,
                    slots_config.clone(),
                )?;
                if received_cmd == packed_cmd {
                    ports_clone.lock().unwrap().push(port);
                    return Err(Ok(redis_value!(simple:"OK")));
                }
                Ok(())
            },
        );

        let _ = runtime.block_on(cmd.query_async::<Option<()>>(&mut connection));
        found_ports.lock().unwrap().sort();
        // MockEnv creates 2 mock connections.
        assert_eq!(*found_ports.lock().unwrap(), expected_ports);
    }

    #[test]
    fn test_async_cluster_fan_out_to_all_primaries() {
        test_async_cluster_fan_out(
            "test_async_cluster_fan_out_to_all_primaries",
            "FLUSHALL",
            vec![6379, 6381],
            None,
        );
    }

    #[test]
    fn test_async_cluster_fan_out_to_all_nodes() {
        test_async_cluster_fan_out(
            "test_async_cluster_fan_out_to_all_nodes",
            "CONFIG SET",
            vec![6379, 6380, 6381, 6382],
            None,
        );
    }

    #[test]
    fn test_async_cluster_fan_out_once_to_each_primary_when_no_replicas_are_available() {
        test_async_cluster_fan_out(
            "test_async_cluster_fan_out_once_to_each_primary_when_no_replicas_are_available",
            "CONFIG SET",
            vec![6379, 6381],
            Some(vec![
                MockSlotRange {
                    primary_port: 6379,
                    replica_ports: Vec::new(),
                    slot_range: (0..8191),
                },
                MockSlotRange {
                    primary_port: 6381,
                    replica_ports: Vec::new(),
                    slot_range: (8192..16383),
                },
            ]),
        );
    }

    #[test]
    fn test_async_cluster_fan_out_once_even_if_primary_has_multiple_slot_ranges() {
        test_async_cluster_fan_out(
            "test_async_cluster_fan_out_once_even_if_primary_has_multiple_slot_ranges",
            "CONFIG SET",
            vec![6379, 6380, 6381, 6382],
            Some(vec![
                MockSlotRange {
                    primary_port: 6379,
                    replica_ports: vec![6380],
                    slot_range: (0..4000),
                },
                MockSlotRange {
                    primary_port: 6381,
                    replica_ports: vec![6382],
                    slot_range: (4001..8191),
                },
                MockSlotRange {
                    primary_port: 6379,
                    replica_ports: vec![6380],
                    slot_range: (8192..8200),
                },
                MockSlotRange {
                    primary_port: 6381,
                    replica_ports: vec![6382],
                    slot_range: (8201..16383),
                },
            ]),
        );
    }

    #[test]
    fn test_async_cluster_route_according_to_passed_argument() {
        let name = "test_async_cluster_route_according_to_passed_argument";

        let touched_ports = Arc::new(std::sync::Mutex::new(Vec::new()));
        let cloned_ports = touched_ports.clone();

        // requests should route to replica
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            move |cmd: &[u8], port| {
                respond_startup_with_replica(name, cmd)?;
                cloned_ports.lock().unwrap().push(port);
                Err(Ok(Value::Nil))
            },
        );

        let mut cmd = cmd("GET");
        cmd.arg("test");
        let _ = runtime.block_on(connection.route_command(
            cmd.clone(),
            RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllMasters, None)),
        ));
        {
            let mut touched_ports = touched_ports.lock().unwrap();
            touched_ports.sort();
            assert_eq!(*touched_ports, vec![6379, 6381]);
            touched_ports.clear();
        }

        let _ = runtime.block_on(connection.route_command(
            cmd.clone(),
            RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllNodes, None)),
        ));
        {
            let mut touched_ports = touched_ports.lock().unwrap();
            touched_ports.sort();
            assert_eq!(*touched_ports, vec![6379, 6380, 6381, 6382]);
            touched_ports.clear();
        }

        let _ = runtime.block_on(connection.route_command(
            cmd,
            RoutingInfo::SingleNode(SingleNodeRoutingInfo::ByAddress {
                host: name.to_string(),
                port: 6382,
            }),
        ));
        {
            let mut touched_ports = touched_ports.lock().unwrap();
            touched_ports.sort();
            assert_eq!(*touched_ports, vec![6382]);
            touched_ports.clear();
        }
    }

    #[test]
    fn test_async_cluster_fan_out_and_aggregate_numeric_response_with_min() {
        let name = "test_async_cluster_fan_out_and_aggregate_numeric_response";
        let mut cmd = Cmd::new();
        cmd.arg("SLOWLOG").arg("LEN");

        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            move |received_cmd: &[u8], port| {
                respond_startup_with_replica_using_config(name, received_cmd, None)?;

                let res = 6383 - port as i64;
                Err(Ok(redis_value!(res))) // this results in 1,2,3,4
            },
        );

        let result = runtime
            .block_on(cmd.query_async::<i64>(&mut connection))
            .unwrap();
        assert_eq!(result, 10, "{result}");
    }

    #[test]
    fn test_async_cluster_fan_out_and_aggregate_logical_array_response() {
        let name = "test_async_cluster_fan_out_and_aggregate_logical_array_response";
        let mut cmd = Cmd::new();
        cmd.arg("SCRIPT")
            .arg("EXISTS")
            .arg("foo")
            .arg("bar")
            .arg("baz")
            .arg("barvaz");

        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            move |received_cmd: &[u8], port| {
                respond_startup_with_replica_using_config(name, received_cmd, None)?;

                if port == 6381 {
                    return Err(Ok(redis_value!([0, 0, 1, 1])));
                } else if port == 6379 {
                    return Err(Ok(redis_value!([0, 1, 0, 1])));
                }

                panic!("unexpected port {port}");
            },
        );

        let result = runtime
            .block_on(cmd.query_async::<Vec<i64>>(&mut connection))
            .unwrap();
        assert_eq!(result, vec![0, 0, 0, 1], "{result:?}");
    }

    #[test]
    fn test_async_cluster_fan_out_and_return_one_succeeded_response() {
        let name = "test_async_cluster_fan_out_and_return_one_succeeded_response";
        let mut cmd = Cmd::new();
        cmd.arg("RANDOMKEY");
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            move |received_cmd: &[u8], port| {
                respond_startup_with_replica_using_config(name, received_cmd, None)?;
                if port == 6381 {
                    Err(Ok(Value::Okay))
                } else {
                    Err(Err(RedisError::from(std::io::Error::new(
                        std::io::ErrorKind::ConnectionReset,
                        "mock-io-error",
                    ))))
                }
            },
        );

        let result = runtime
            .block_on(cmd.query_async::<Value>(&mut connection))
            .unwrap();
        assert_eq!(result, Value::Okay);
    }

    #[test]
    fn test_async_cluster_fan_out_and_return_nil_if_no_other_value_was_received() {
        let name = "test_async_cluster_fan_out_and_return_one_succeeded_response";
        let mut cmd = Cmd::new();
        cmd.arg("RANDOMKEY");
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            move |received_cmd: &[u8], _| {
                respond_startup_with_replica_using_config(name, received_cmd, None)?;
                Err(Ok(Value::Nil))
            },
        );

        let result = runtime
            .block_on(cmd.query_async::<Value>(&mut connection))
            .unwrap();
        assert_eq!(result, Value::Nil);
    }

    #[test]
    fn test_async_cluster_fan_out_and_fail_one_succeeded_if_there_are_no_successes() {
        let name = "test_async_cluster_fan_out_and_fail_one_succeeded_if_there_are_no_successes";
        let mut cmd = Cmd::new();
        cmd.arg("SCRIPT").arg("KILL");
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            move |received_cmd: &[u8], _port| {
                respond_startup_with_replica_using_config(name, received_cmd, None)?;

                Err(Err((
                    ServerErrorKind::NotBusy.into(),
                    "No scripts in execution right now",
                )
                    .into()))
            },
        );

        let result = runtime
            .block_on(cmd.query_async::<Value>(&mut connection))
            .unwrap_err();
        assert_eq!(result.kind(), ServerErrorKind::NotBusy.into());
    }

    #[test]
    fn test_async_cluster_fan_out_and_return_all_succeeded_response() {
        let name = "test_async_cluster_fan_out_and_return_all_succeeded_response";
        let cmd = cmd("FLUSHALL");
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            move |received_cmd: &[u8], _port| {
                respond_startup_with_replica_using_config(name, received_cmd, None)?;
                Err(Ok(Value::Okay))
            },
        );

        let result = runtime
            .block_on(cmd.query_async::<Value>(&mut connection))
            .unwrap();
        assert_eq!(result, Value::Okay, "{result:?}");
    }

    #[test]
    fn test_async_cluster_fan_out_and_fail_all_succeeded_if_there_is_a_single_failure() {
        let name = "test_async_cluster_fan_out_and_fail_all_succeeded_if_there_is_a_single_failure";
        let cmd = cmd("FLUSHALL");
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            move |received_cmd: &[u8], port| {
                respond_startup_with_replica_using_config(name, received_cmd, None)?;
                if port == 6381 {
                    return Err(Err((
                        ServerErrorKind::NotBusy.into(),
                        "No scripts in execution right now",
                    )
                        .into()));
                }
                Err(Ok(Value::Okay))
            },
        );

        let result = runtime
            .block_on(cmd.query_async::<Value>(&mut connection))
            .unwrap_err();
        assert_eq!(result.kind(), ServerErrorKind::NotBusy.into());
    }

    #[test]
    fn test_async_cluster_fan_out_and_return_one_succeeded_ignoring_empty_values() {
        let name = "test_async_cluster_fan_out_and_return_one_succeeded_ignoring_empty_values";
        let cmd = cmd("RANDOMKEY");
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            move |received_cmd: &[u8], port| {
                respond_startup_with_replica_using_config(name, received_cmd, None)?;
                if port == 6381 {
                    return Err(Ok(redis_value!("foo")));
                }
                Err(Ok(Value::Nil))
            },
        );

        let result = runtime
            .block_on(cmd.query_async::<String>(&mut connection))
            .unwrap();
        assert_eq!(result, "foo", "{result:?}");
    }

    #[test]
    fn test_async_cluster_fan_out_and_return_map_of_results_for_special_response_policy() {
        let name = "foo";
        let mut cmd = Cmd::new();
        cmd.arg("LATENCY").arg("LATEST");
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            move |received_cmd: &[u8], port| {
                respond_startup_with_replica_using_config(name, received_cmd, None)?;
                Err(Ok(redis_value!(format!("latency: {port}"))))
            },
        );

        // TODO once RESP3 is in, return this as a map
        let mut result = runtime
            .block_on(cmd.query_async::<Vec<(String, String)>>(&mut connection))
            .unwrap();
        result.sort();
        assert_eq!(
            result,
            vec![
                (format!("{name}:6379"), "latency: 6379".to_string()),
                (format!("{name}:6380"), "latency: 6380".to_string()),
                (format!("{name}:6381"), "latency: 6381".to_string()),
                (format!("{name}:6382"), "latency: 6382".to_string())
            ],
            "{result:?}"
        );
    }

    #[test]
    fn test_async_cluster_fan_out_and_combine_arrays_of_values() {
        let name = "foo";
        let cmd = cmd("KEYS");
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            move |received_cmd: &[u8], port| {
                respond_startup_with_replica_using_config(name, received_cmd, None)?;
                Err(Ok(redis_value!([(format!("key:{port}"))])))
            },
        );

        let mut result = runtime
            .block_on(cmd.query_async::<Vec<String>>(&mut connection))
            .unwrap();
        result.sort();
        assert_eq!(
            result,
            vec!["key:6379".to_string(), "key:6381".to_string(),],
            "{result:?}"
        );
    }

    #[test]
    fn test_async_cluster_split_multi_shard_command_and_combine_arrays_of_values() {
        let name = "test_async_cluster_split_multi_shard_command_and_combine_arrays_of_values";
        let mut cmd = cmd("MGET");
        cmd.arg("foo").arg("bar").arg("baz");
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            move |received_cmd: &[u8], port| {
                respond_startup_with_replica_using_config(name, received_cmd, None)?;
                let cmd_str = std::str::from_utf8(received_cmd).unwrap();
                let results = ["foo", "bar", "baz"]
                    .iter()
                    .filter(|&expected_key| cmd_str.contains(expected_key))
                    .map(|expected_key| redis_value!(format!("{expected_key}-{port}").into_bytes()))
                    .collect();
                Err(Ok(Value::Array(results)))
            },
        );

        let result = runtime
            .block_on(cmd.query_async::<Vec<String>>(&mut connection))
            .unwrap();
        assert_eq!(result, vec!["foo-6382", "bar-6380", "baz-6380"]);
    }

    #[test]
    fn test_async_cluster_handle_asking_error_in_split_multi_shard_command() {
        let name = "test_async_cluster_handle_asking_error_in_split_multi_shard_command";
        let mut cmd = cmd("MGET");
        cmd.arg("foo").arg("bar").arg("baz");
        let asking_called = Arc::new(AtomicU16::new(0));
        let asking_called_cloned = asking_called.clone();
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            move |received_cmd: &[u8], port| {
                respond_startup_with_replica_using_config(name, received_cmd, None)?;
                let cmd_str = std::str::from_utf8(received_cmd).unwrap();
                if cmd_str.contains("ASKING") && port == 6382 {
                    asking_called_cloned.fetch_add(1, Ordering::Relaxed);
                }
                if port == 6380 && cmd_str.contains("baz") {
                    return Err(parse_redis_value(
                        format!("-ASK 14000 {name}:6382\r\n").as_bytes(),
                    ));
                }
                let results = ["foo", "bar", "baz"]
                    .iter()
                    .filter(|&expected_key| cmd_str.contains(expected_key))
                    .map(|expected_key| redis_value!(format!("{expected_key}-{port}")))
                    .collect();
                Err(Ok(Value::Array(results)))
            },
        );

        let result = runtime
            .block_on(cmd.query_async::<Vec<String>>(&mut connection))
            .unwrap();
        assert_eq!(result, vec!["foo-6382", "bar-6380", "baz-6382"]);
        assert_eq!(asking_called.load(Ordering::Relaxed), 1);
    }

    #[async_test]
    async fn test_async_cluster_with_username_and_password() {
        let cluster = TestClusterContext::new_insecure_with_cluster_client_builder(|builder| {
            builder
                .username(RedisCluster::username())
                .password(RedisCluster::password())
        });
        cluster.disable_default_user();

        let mut connection = cluster.async_connection().await;
        cmd("SET")
            .arg("test")
            .arg("test_data")
            .exec_async(&mut connection)
            .await
            .unwrap();
        let res: String = cmd("GET")
            .arg("test")
            .clone()
            .query_async(&mut connection)
            .await
            .unwrap();
        assert_eq!(res, "test_data");
    }

    #[test]
    fn test_async_cluster_io_error() {
        let name = "test_async_cluster_io_error";
        let completed = Arc::new(AtomicI32::new(0));
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")]).retries(2),
            name,
            move |cmd: &[u8], port| {
                respond_startup_two_nodes(name, cmd)?;
                // Error twice with io-error, ensure connection is reestablished w/out calling
                // other node (i.e., not doing a full slot rebuild)
                match port {
                    6380 => panic!("Node should not be called"),
                    _ => match completed.fetch_add(1, Ordering::SeqCst) {
                        0..=1 => Err(Err(RedisError::from(std::io::Error::new(
                            std::io::ErrorKind::ConnectionReset,
                            "mock-io-error",
                        )))),
                        _ => Err(Ok(redis_value!("123"))),
                    },
                }
            },
        );

        let value = runtime.block_on(
            cmd("GET")
                .arg("test")
                .query_async::<Option<i32>>(&mut connection),
        );

        assert_eq!(value, Ok(Some(123)));
    }

    #[test]
    fn test_async_cluster_io_error_without_fallback_redirects() {
        let name = "test_async_cluster_io_error_without_fallback_redirects";
        let moved_served = Arc::new(AtomicBool::new(false));
        let moved_served_clone = moved_served.clone();
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")]).retries(2),
            name,
            {
                let dead = Arc::new(AtomicBool::new(false));
                move |cmd: &[u8], port| match port {
                    6379 => {
                        if dead.load(Ordering::SeqCst) {
                            return Err(Err(broken_pipe_error()));
                        }
                        respond_startup_two_nodes(name, cmd)?;
                        dead.store(true, Ordering::SeqCst);
                        Err(Err(broken_pipe_error()))
                    }
                    6380 => {
                        respond_startup_two_nodes(name, cmd)?;
                        moved_served_clone.store(true, Ordering::SeqCst);
                        Err(parse_redis_value(
                            format!("-MOVED 123 {name}:6379\r\n").as_bytes(),
                        ))
                    }
                    _ => panic!("unexpected port {port}"),
                }
            },
        );

        let result = runtime.block_on(
            cmd("GET")
                .arg("test")
                .query_async::<Option<i32>>(&mut connection),
        );

        assert!(
            moved_served.load(Ordering::SeqCst),
            "with no in-shard fallback the request should fall through to another shard's connection and receive a MOVED",
        );
        assert_eq!(
            result.unwrap_err().kind(),
            ErrorKind::Io,
            "following the MOVED back to the dead shard owner should surface its io error",
        );
    }

    #[test]
    fn test_async_cluster_io_error_recovers_via_repair() {
        let name = "test_async_cluster_io_error_recovers_via_repair";
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")]).retries(0),
            name,
            {
                let completed = Arc::new(AtomicI32::new(0));
                move |cmd: &[u8], port| {
                    respond_startup_two_nodes(name, cmd)?;
                    // 6379 and 6380 are the two primaries.
                    // 6379 fails the first data command, then recovers.
                    match port {
                        6379 => match completed.fetch_add(1, Ordering::SeqCst) {
                            0 => Err(Err(broken_pipe_error())),
                            _ => Err(Ok(redis_value!("123"))),
                        },
                        6380 => panic!("Node should not be called"),
                        _ => panic!("unexpected port {port}"),
                    }
                }
            },
        );

        let first = runtime.block_on(
            cmd("GET")
                .arg("test")
                .query_async::<Option<i32>>(&mut connection),
        );
        assert_eq!(
            first.unwrap_err().kind(),
            ErrorKind::Io,
            "first call should surface the underlying connection reset",
        );

        let second = runtime.block_on(
            cmd("GET")
                .arg("test")
                .query_async::<Option<i32>>(&mut connection),
        );
        assert_eq!(second, Ok(Some(123)));
    }

    #[test]
    fn test_async_cluster_reconnect_does_not_stall_healthy_shard() {
        let name = "test_async_cluster_reconnect_does_not_stall_healthy_shard";
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")]).retries(0),
            name,
            move |cmd: &[u8], port| {
                respond_startup_two_nodes(name, cmd)?;
                // 6379 and 6380 are the two primaries.
                // "test" key goes to 6379, which is permanently down after the handshake.
                // "foo" key goes to 6380.
                match port {
                    6379 => Err(Err(broken_pipe_error())),
                    6380 => Err(Ok(redis_value!("123"))),
                    _ => panic!("unexpected port {port}"),
                }
            },
        );

        let downed = runtime.block_on(
            cmd("GET")
                .arg("test")
                .query_async::<Option<i32>>(&mut connection),
        );
        assert_eq!(downed.unwrap_err().kind(), ErrorKind::Io);

        let healthy = runtime.block_on(
            cmd("GET")
                .arg("foo")
                .query_async::<Option<i32>>(&mut connection)
                .timeout(futures_time::time::Duration::from_secs(5)),
        );
        assert_eq!(
            healthy.expect("healthy shard stalled behind the dead shard's reconnect"),
            Ok(Some(123)),
        );
    }

    #[test]
    fn test_async_cluster_read_routes_around_dead_replica() {
        let name = "test_async_cluster_read_routes_around_dead_replica";
        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(1)
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            {
                // There are two shards: [6379, 6380] and [6381, 6382].
                // The primary (6379) is always healthy.
                // The replica (6380) is dead after the initial handshake.
                let dead = Arc::new(AtomicBool::new(false));
                move |cmd: &[u8], port| match port {
                    6379 => {
                        respond_startup_with_replica(name, cmd)?;
                        Err(Ok(redis_value!("123")))
                    }
                    6380 => {
                        if dead.load(Ordering::SeqCst) {
                            return Err(Err(broken_pipe_error()));
                        }
                        respond_startup_with_replica(name, cmd)?;
                        dead.store(true, Ordering::SeqCst);
                        Err(Err(broken_pipe_error()))
                    }
                    // No data commands should be routed to the second shard.
                    // Initial handshake is okay.
                    _ => {
                        respond_startup_with_replica(name, cmd)?;
                        panic!("Node {port} should not be called");
                    }
                }
            },
        );

        let value = runtime.block_on(
            cmd("GET")
                .arg("test")
                .query_async::<Option<i32>>(&mut connection),
        );
        assert_eq!(value, Ok(Some(123)));
    }

    #[test]
    fn test_async_cluster_non_retryable_error_should_not_retry() {
        let name = "node";
        let completed = Arc::new(AtomicI32::new(0));
        let MockEnv {
            async_connection: mut connection,
            handler: _handler,
            runtime,
            ..
        } = MockEnv::new(name, {
            let completed = completed.clone();
            move |cmd: &[u8], _| {
                respond_startup_two_nodes(name, cmd)?;
                // A genuinely non-retryable server error should be surfaced immediately,
                // without any retry or slot rebuild.
                completed.fetch_add(1, Ordering::SeqCst);
                Err(Err((ServerErrorKind::ResponseError.into(), "").into()))
            }
        });

        let result = runtime.block_on(
            cmd("GET")
                .arg("test")
                .query_async::<Option<i32>>(&mut connection),
        );

        assert_matches!(&result, Err(err) if err.kind() == ServerErrorKind::ResponseError.into());
        assert_eq!(completed.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn test_async_cluster_can_be_created_with_partial_slot_coverage() {
        let name = "test_async_cluster_can_be_created_with_partial_slot_coverage";
        let slots_config = Some(vec![
            MockSlotRange {
                primary_port: 6379,
                replica_ports: vec![],
                slot_range: (0..8000),
            },
            MockSlotRange {
                primary_port: 6381,
                replica_ports: vec![],
                slot_range: (8201..16380),
            },
        ]);

        let MockEnv {
            async_connection: mut connection,
            handler: _handler,
            runtime,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .read_routing_strategy(RandomReplicaStrategy),
            name,
            move |received_cmd: &[u8], _| {
                respond_startup_with_replica_using_config(
                    name,
                    received_cmd,
                    slots_config.clone(),
                )?;
                Err(Ok(redis_value!(simple:"PONG")))
            },
        );

        let res = runtime.block_on(connection.req_packed_command(&redis::cmd("PING")));
        assert_matches!(res, Ok(_));
    }

    #[async_test]
    async fn test_async_cluster_handle_complete_server_disconnect_without_panicking() {
        let cluster =
            TestClusterContext::new_with_cluster_client_builder(|builder| builder.retries(2));

        let mut connection = cluster.async_connection().await;
        drop(cluster);
        for _ in 0..5 {
            let cmd = cmd("PING");
            let result = connection
                .route_command(
                    cmd.clone(),
                    RoutingInfo::SingleNode(SingleNodeRoutingInfo::Random),
                )
                .await;
            // TODO - this should be a NoConnectionError, but ATM we get the errors from the failing
            assert_matches!(result, Err(_));
            // This will route to all nodes - different path through the code.
            let result = connection.req_packed_command(&cmd).await;
            // TODO - this should be a NoConnectionError, but ATM we get the errors from the failing
            assert_matches!(result, Err(_));
        }
    }

    #[async_test]
    async fn test_async_cluster_reconnect_after_complete_server_disconnect() {
        let cluster = TestClusterContext::new_insecure_with_cluster_client_builder(|builder| {
            builder.retries(2)
        });

        let ports: Vec<_> = cluster.get_ports();

        let mut connection = cluster.async_connection().await;
        drop(cluster);

        let cmd = cmd("PING");

        let result = connection
            .route_command(
                cmd.clone(),
                RoutingInfo::SingleNode(SingleNodeRoutingInfo::Random),
            )
            .await;
        // TODO - this should be a NoConnectionError, but ATM we get the errors from the failing
        assert_matches!(result, Err(_));

        // This will route to all nodes - different path through the code.
        let result = connection.req_packed_command(&cmd).await;
        // TODO - this should be a NoConnectionError, but ATM we get the errors from the failing
        assert_matches!(result, Err(_));

        let _cluster = RedisCluster::new(RedisClusterConfiguration {
            ports: ports.clone(),
            ..Default::default()
        });

        let result = connection.req_packed_command(&cmd).await.unwrap();
        assert_eq!(result, redis_value!(simple:"PONG"));
    }

    #[async_test]
    async fn test_async_cluster_reconnect_after_complete_server_disconnect_route_to_many() {
        let cluster = TestClusterContext::new_insecure_with_cluster_client_builder(|builder| {
            builder.retries(3)
        });

        let ports: Vec<_> = cluster.get_ports();

        let mut connection = cluster.async_connection().await;
        drop(cluster);

        // recreate cluster
        let _cluster = RedisCluster::new(RedisClusterConfiguration {
            ports: ports.clone(),
            ..Default::default()
        });

        // explicitly route to all primaries and request all succeeded
        let result = connection
            .route_command(
                cmd("PING"),
                RoutingInfo::MultiNode((
                    MultipleNodeRoutingInfo::AllMasters,
                    Some(ResponsePolicy::AllSucceeded),
                )),
            )
            .await
            .unwrap();
        assert_eq!(result, redis_value!(simple:"PONG"));
    }

    #[test]
    fn test_async_cluster_saves_reconnected_connection() {
        let name = "test_async_cluster_saves_reconnected_connection";
        let ping_attempts = Arc::new(AtomicI32::new(0));
        let ping_attempts_clone = ping_attempts.clone();
        let get_attempts = AtomicI32::new(0);

        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")]).retries(1),
            name,
            move |cmd: &[u8], port| {
                if port == 6380 {
                    respond_startup_two_nodes(name, cmd)?;
                    return Err(parse_redis_value(
                        format!("-MOVED 123 {name}:6379\r\n").as_bytes(),
                    ));
                }

                if is_connection_check(cmd) {
                    let connect_attempt = ping_attempts_clone.fetch_add(1, Ordering::Relaxed);
                    let past_get_attempts = get_attempts.load(Ordering::Relaxed);
                    // We want connection checks to fail after the first GET attempt, until it retries. Hence, we wait for 5 PINGs -
                    // 1. initial connection,
                    // 2. refresh slots on client creation,
                    // 3. refresh_connections `check_connection` after first GET failed,
                    // 4. refresh_connections `connect_and_check` after first GET failed,
                    // 5. reconnect on 2nd GET attempt.
                    // more than 5 attempts mean that the server reconnects more than once, which is the behavior we're testing against.
                    if past_get_attempts != 1 || connect_attempt > 3 {
                        respond_startup_two_nodes(name, cmd)?;
                    }
                    if connect_attempt > 5 {
                        panic!("Too many pings!");
                    }
                    Err(Err(broken_pipe_error()))
                } else {
                    respond_startup_two_nodes(name, cmd)?;
                    let past_get_attempts = get_attempts.fetch_add(1, Ordering::Relaxed);
                    // we fail the initial GET request, and after that we'll fail the first reconnect attempt, in the `refresh_connections` attempt.
                    if past_get_attempts == 0 {
                        // Error once with io-error, ensure connection is reestablished w/out calling
                        // other node (i.e., not doing a full slot rebuild)
                        Err(Err(broken_pipe_error()))
                    } else {
                        Err(Ok(redis_value!("123")))
                    }
                }
            },
        );

        for _ in 0..4 {
            let value = runtime.block_on(
                cmd("GET")
                    .arg("test")
                    .query_async::<Option<i32>>(&mut connection),
            );

            assert_eq!(value, Ok(Some(123)));
        }
        // If you need to change the number here due to a change in the cluster, you probably also need to adjust the test.
        // See the PING counts above to explain why 5 is the target number.
        assert_eq!(ping_attempts.load(Ordering::Acquire), 5);
    }

    #[test]
    fn test_async_cluster_limit_reconnection_attempts() {
        let name = "test_async_cluster_limit_reconnection_attempts";
        let reconnects_attempts = Arc::new(AtomicI32::new(0));
        let reconnects_attempts_clone = reconnects_attempts.clone();

        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(0)
                .max_connection_attempts(NonZeroUsize::new(1).unwrap()),
            name,
            move |cmd: &[u8], port| {
                if port == 6380 {
                    respond_startup_two_nodes(name, cmd)?;
                    return Err(parse_redis_value(
                        format!("-ASK 123 {name}:6379\r\n").as_bytes(),
                    ));
                }
                if port != 6379 {
                    panic!("Unexpected port {port}");
                }

                if is_connection_check(cmd) {
                    let past_attempts = reconnects_attempts_clone.fetch_add(1, Ordering::Relaxed);

                    if past_attempts < 3 {
                        respond_startup_two_nodes(name, cmd)?;
                    }
                    if past_attempts > 4 {
                        panic!("Too many attempts!");
                    }
                    Err(Err(broken_pipe_error()))
                } else {
                    respond_startup_two_nodes(name, cmd)?;
                    Err(Err(broken_pipe_error()))
                }
            },
        );

        let value = runtime.block_on(
            cmd("GET")
                .arg("test")
                .query_async::<Option<i32>>(&mut connection),
        );

        assert_matches!(value, Err(err) if err.is_connection_dropped());
        runtime.block_on(sleep(Duration::from_millis(1000).into()));

        assert_eq!(reconnects_attempts.load(Ordering::Acquire), 5);
    }

    #[async_test]
    async fn test_kill_connection_on_drop_even_when_blocking() {
        let ctx = TestClusterContext::new_with_cluster_client_builder(|builder| builder.retries(3));

        async fn count_ids(conn: &mut impl redis::aio::ConnectionLike) -> RedisResult<usize> {
            // we use a pipeline with a fake command in order to ensure that the CLIENT LIST command gets routed to the correct node.
            // we use LIST as the key, in order to ensure that adding CLIENT LIST doesn't trigger a CROSSSLOTS error.
            let initial_connections: String = pipe()
                .cmd("GET")
                .arg("LIST")
                .cmd("CLIENT")
                .arg("LIST")
                .query_async::<Vec<Option<String>>>(conn)
                .await
                .unwrap()
                .pop()
                .unwrap()
                .unwrap();

            Ok(initial_connections
                .as_bytes()
                .windows(3)
                .filter(|substr| substr == b"id=")
                .count())
        }

        let mut conn = ctx.async_connection().await;
        let mut connection_to_dispose_of = ctx.async_connection().await;

        assert_eq!(count_ids(&mut conn).await.unwrap(), 2);

        let mut cmd = cmd("BLPOP");
        let command_that_blocks = Box::pin(async move {
            () = cmd
                .arg("LIST")
                .arg(0)
                .exec_async(&mut connection_to_dispose_of)
                .await
                .unwrap();
            unreachable!("This shouldn't happen");
        })
        .fuse();
        let timeout =
            futures_time::task::sleep(futures_time::time::Duration::from_millis(1)).fuse();

        let others = futures::future::select(command_that_blocks, timeout).await;
        drop(others);

        futures_time::task::sleep(futures_time::time::Duration::from_millis(100)).await;

        assert_eq!(count_ids(&mut conn).await.unwrap(), 1);
    }

    #[test]
    fn test_async_cluster_do_not_retry_when_receiver_was_dropped() {
        let name = "test_async_cluster_do_not_retry_when_receiver_was_dropped";
        let cmd = cmd("FAKE_COMMAND");
        let packed_cmd = cmd.get_packed_command();
        let request_counter = Arc::new(AtomicU32::new(0));
        let cloned_req_counter = request_counter.clone();
        let MockEnv {
            runtime,
            async_connection: mut connection,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")])
                .retries(5)
                // Backoff must exceed the outer timeout; 1 ms was too tight (timeout could win
                // before the first mock request on slow CI).
                .max_retry_wait(64)
                .min_retry_wait(64),
            name,
            move |received_cmd: &[u8], _| {
                respond_startup(name, received_cmd)?;

                if received_cmd == packed_cmd {
                    cloned_req_counter.fetch_add(1, Ordering::Relaxed);
                    return Err(Err((
                        ServerErrorKind::TryAgain.into(),
                        "seriously, try again",
                    )
                        .into()));
                }

                Err(Ok(Value::Okay))
            },
        );

        runtime.block_on(async move {
            let err = cmd
                .exec_async(&mut connection)
                // Fires after the first TRYAGAIN returns but before min_retry_wait elapses.
                .timeout(futures_time::time::Duration::from_millis(32))
                .await
                .unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);

            // Give the driver a chance to run a spurious retry if the drop path regressed.
            sleep(Duration::from_millis(10).into()).await;
        });

        assert_eq!(request_counter.load(Ordering::Relaxed), 1);
    }

    #[async_test]
    async fn test_async_cluster_connect_lazily() {
        let cluster = TestClusterContext::new();

        let connection = cluster
            .client
            .get_pending_async_connection_with_config(Default::default());
        smoke_test_connection(connection).await;
    }

    #[async_test]
    async fn test_fail_on_empty_command() {
        let cluster = TestClusterContext::new();
        let mut connection = cluster.async_connection().await;

        let error: RedisError = redis::Pipeline::new()
            .query_async::<String>(&mut connection)
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Client);
        assert_eq!(error.to_string(), "empty command - Client");

        let error: RedisError = redis::Cmd::new()
            .query_async::<String>(&mut connection)
            .await
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Client);
        assert_eq!(error.to_string(), "empty command - Client");
    }

    mod pubsub {
        use super::*;

        async fn subscribe_to_channels(
            pubsub_conn: &mut ClusterConnection,
            rx: &mut UnboundedReceiver<PushInfo>,
            supports_redis_7: bool,
        ) {
            let _: () = pubsub_conn.subscribe("regular-phonewave").await.unwrap();
            let push: PushInfo = get_push(rx).await.unwrap();
            assert_eq!(
                push,
                PushInfo {
                    kind: PushKind::Subscribe,
                    data: vec![redis_value!("regular-phonewave"), redis_value!(1)]
                }
            );

            let _: () = pubsub_conn.psubscribe("phonewave*").await.unwrap();
            let push = get_push(rx).await.unwrap();
            assert_eq!(
                push,
                PushInfo {
                    kind: PushKind::PSubscribe,
                    data: vec![redis_value!("phonewave*"), redis_value!(2)]
                }
            );

            if supports_redis_7 {
                let _: () = pubsub_conn.ssubscribe("sphonewave").await.unwrap();
                let push = get_push(rx).await.unwrap();
                assert_eq!(
                    push,
                    PushInfo {
                        kind: PushKind::SSubscribe,
                        data: vec![redis_value!("sphonewave"), redis_value!(1)]
                    }
                );
            }
        }

        async fn check_publishing(
            publish_conn: &mut ClusterConnection,
            rx: &mut UnboundedReceiver<PushInfo>,
            supports_redis_7: bool,
        ) {
            let _: () = publish_conn
                .publish("regular-phonewave", "banana")
                .await
                .unwrap();
            let push = get_push(rx).await.unwrap();
            assert_eq!(
                push,
                PushInfo {
                    kind: PushKind::Message,
                    data: vec![redis_value!("regular-phonewave"), redis_value!("banana"),]
                }
            );

            let _: () = publish_conn
                .publish("phonewave-pattern", "banana")
                .await
                .unwrap();
            let push = get_push(rx).await.unwrap();
            assert_eq!(
                push,
                PushInfo {
                    kind: PushKind::PMessage,
                    data: vec![
                        redis_value!("phonewave*"),
                        redis_value!("phonewave-pattern"),
                        redis_value!("banana"),
                    ]
                }
            );

            if supports_redis_7 {
                let _: () = publish_conn.spublish("sphonewave", "banana").await.unwrap();
                let push = get_push(rx).await.unwrap();
                assert_eq!(
                    push,
                    PushInfo {
                        kind: PushKind::SMessage,
                        data: vec![redis_value!("sphonewave"), redis_value!("banana"),]
                    }
                );
            }
        }

        #[async_test]
        async fn test_pub_sub_subscription() {
            if !use_protocol().supports_resp3() {
                return;
            }

            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let ctx = TestClusterContext::new_with_cluster_client_builder(|builder| {
                builder.push_sender(tx.clone())
            });

            let (mut publish_conn, mut pubsub_conn) =
                join!(ctx.async_connection(), ctx.async_connection());
            let supports_redis_7 = ctx.supports(REDIS_CE_7_0);

            subscribe_to_channels(&mut pubsub_conn, &mut rx, supports_redis_7).await;

            check_publishing(&mut publish_conn, &mut rx, supports_redis_7).await;
        }

        #[async_test]
        async fn test_pub_sub_subscription_with_config() {
            if !use_protocol().supports_resp3() {
                return;
            }

            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let ctx = TestClusterContext::new();
            let config = redis::cluster::ClusterConfig::new().set_push_sender(tx.clone());

            let (mut publish_conn, mut pubsub_conn) = join!(
                ctx.async_connection_with_config(config.clone()),
                ctx.async_connection_with_config(config)
            );
            let supports_redis_7 = ctx.supports(REDIS_CE_7_0);

            subscribe_to_channels(&mut pubsub_conn, &mut rx, supports_redis_7).await;

            check_publishing(&mut publish_conn, &mut rx, supports_redis_7).await;
        }

        #[async_test]
        async fn test_pub_sub_shardnumsub() {
            if !use_protocol().supports_resp3() {
                return;
            }

            let ctx = TestClusterContext::new();
            skip_if_context_does_not_support!(ctx, REDIS_CE_7_0);

            let mut pubsub_conn = ctx.async_connection().await;
            let _: () = pubsub_conn.ssubscribe("foo").await.unwrap();

            let res = cmd("pubsub")
                .arg("SHARDNUMSUB")
                .arg("foo")
                .query_async::<(String, usize)>(&mut pubsub_conn)
                .await
                .unwrap();
            assert_eq!(res, ("foo".to_string(), 1));
        }

        #[async_test]
        async fn test_pub_sub_unsubscription() {
            if !use_protocol().supports_resp3() {
                return;
            }

            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let ctx = TestClusterContext::new_with_cluster_client_builder(|builder| {
                builder.push_sender(tx.clone())
            });

            let (mut publish_conn, mut pubsub_conn) =
                join!(ctx.async_connection(), ctx.async_connection());
            let supports_redis_7 = ctx.supports(REDIS_CE_7_0);

            let _: () = pubsub_conn.subscribe("regular-phonewave").await.unwrap();
            let push = get_push(&mut rx).await.unwrap();
            assert_eq!(
                push,
                PushInfo {
                    kind: PushKind::Subscribe,
                    data: vec![redis_value!("regular-phonewave"), redis_value!(1)]
                }
            );
            let _: () = pubsub_conn.unsubscribe("regular-phonewave").await.unwrap();
            let push = get_push(&mut rx).await.unwrap();
            assert_eq!(
                push,
                PushInfo {
                    kind: PushKind::Unsubscribe,
                    data: vec![redis_value!("regular-phonewave"), redis_value!(0)]
                }
            );

            let _: () = pubsub_conn.psubscribe("phonewave*").await.unwrap();
            let push = get_push(&mut rx).await.unwrap();
            assert_eq!(
                push,
                PushInfo {
                    kind: PushKind::PSubscribe,
                    data: vec![redis_value!("phonewave*"), redis_value!(1)]
                }
            );
            let _: () = pubsub_conn.punsubscribe("phonewave*").await.unwrap();
            let push = get_push(&mut rx).await.unwrap();
            assert_eq!(
                push,
                PushInfo {
                    kind: PushKind::PUnsubscribe,
                    data: vec![redis_value!("phonewave*"), redis_value!(0)]
                }
            );

            if supports_redis_7 {
                let _: () = pubsub_conn.ssubscribe("sphonewave").await.unwrap();
                let push = get_push(&mut rx).await.unwrap();
                assert_eq!(
                    push,
                    PushInfo {
                        kind: PushKind::SSubscribe,
                        data: vec![redis_value!("sphonewave"), redis_value!(1)]
                    }
                );
                let _: () = pubsub_conn.sunsubscribe("sphonewave").await.unwrap();
                let push = get_push(&mut rx).await.unwrap();
                assert_eq!(
                    push,
                    PushInfo {
                        kind: PushKind::SUnsubscribe,
                        data: vec![redis_value!("sphonewave"), redis_value!(0)]
                    }
                );
            }

            let _: () = publish_conn
                .publish("regular-phonewave", "banana")
                .await
                .unwrap();
            let _: () = publish_conn
                .publish("phonewave-pattern", "banana")
                .await
                .unwrap();
            if supports_redis_7 {
                let _: () = publish_conn.spublish("sphonewave", "banana").await.unwrap();
            }

            assert_eq!(
                rx.try_recv(),
                Err(tokio::sync::mpsc::error::TryRecvError::Empty)
            );
        }

        #[async_test]
        async fn test_connection_is_still_usable_if_pubsub_receiver_is_dropped() {
            if !use_protocol().supports_resp3() {
                return;
            }

            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let ctx = TestClusterContext::new_with_cluster_client_builder(|builder| {
                builder.push_sender(tx.clone())
            });

            let mut pubsub_conn = ctx.async_connection().await;
            let supports_redis_7 = ctx.supports(REDIS_CE_7_0);

            subscribe_to_channels(&mut pubsub_conn, &mut rx, supports_redis_7).await;

            drop(rx);

            assert_eq!(
                cmd("PING")
                    .query_async::<String>(&mut pubsub_conn)
                    .await
                    .unwrap(),
                "PONG".to_string()
            );
        }

        #[async_test]
        async fn test_multiple_subscribes_and_unsubscribes_work() {
            if !use_protocol().supports_resp3() {
                return;
            }

            // In this test we subscribe on all subscription variations to 3 channels in a single call, then unsubscribe from 2 channels.
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let ctx = TestClusterContext::new_with_cluster_client_builder(|builder| {
                builder.push_sender(tx.clone())
            });

            let mut pubsub_conn = ctx.async_connection().await;
            let supports_redis_7 = ctx.supports(REDIS_CE_7_0);

            let _: () = pubsub_conn
                .subscribe(&[
                    "regular-phonewave1",
                    "regular-phonewave2",
                    "regular-phonewave3",
                ])
                .await
                .unwrap();
            for i in 1..4 {
                let push = get_push(&mut rx).await.unwrap();
                assert_eq!(
                    push,
                    PushInfo {
                        kind: PushKind::Subscribe,
                        data: vec![
                            redis_value!(format!("regular-phonewave{i}")),
                            redis_value!(i),
                        ]
                    }
                );
            }
            let _: () = pubsub_conn
                .unsubscribe(&["regular-phonewave1", "regular-phonewave2"])
                .await
                .unwrap();
            for i in 1..3 {
                let push = get_push(&mut rx).await.unwrap();
                assert_eq!(
                    push,
                    PushInfo {
                        kind: PushKind::Unsubscribe,
                        data: vec![
                            redis_value!(format!("regular-phonewave{i}")),
                            redis_value!(3 - i),
                        ]
                    }
                );
            }

            let _: () = pubsub_conn
                .psubscribe(&["phonewave*1", "phonewave*2", "phonewave*3"])
                .await
                .unwrap();
            for i in 1..4 {
                let push = get_push(&mut rx).await.unwrap();
                assert_eq!(
                    push,
                    PushInfo {
                        kind: PushKind::PSubscribe,
                        data: vec![redis_value!(format!("phonewave*{i}")), redis_value!(i)]
                    }
                );
            }

            let _: () = pubsub_conn
                .punsubscribe(&["phonewave*1", "phonewave*2"])
                .await
                .unwrap();
            for i in 1..3 {
                let push = get_push(&mut rx).await.unwrap();
                assert_eq!(
                    push,
                    PushInfo {
                        kind: PushKind::PUnsubscribe,
                        data: vec![redis_value!(format!("phonewave*{i}")), redis_value!(3 - i)]
                    }
                );
            }
            if supports_redis_7 {
                // we use the curly braces in order to avoid cross slots errors.
                let _: () = pubsub_conn
                    .ssubscribe(&["{sphonewave}1", "{sphonewave}2", "{sphonewave}3"])
                    .await
                    .unwrap();
                for i in 1..4 {
                    let push = get_push(&mut rx).await.unwrap();
                    assert_eq!(
                        push,
                        PushInfo {
                            kind: PushKind::SSubscribe,
                            data: vec![redis_value!(format!("{{sphonewave}}{i}")), redis_value!(i)]
                        }
                    );
                }

                let _: () = pubsub_conn
                    .sunsubscribe(&["{sphonewave}1", "{sphonewave}2"])
                    .await
                    .unwrap();
                for i in 1..3 {
                    let push = get_push(&mut rx).await.unwrap();
                    assert_eq!(
                        push,
                        PushInfo {
                            kind: PushKind::SUnsubscribe,
                            data: vec![
                                redis_value!(format!("{{sphonewave}}{i}")),
                                redis_value!(3 - i),
                            ]
                        }
                    );
                }
            }

            assert_eq!(
                rx.try_recv(),
                Err(tokio::sync::mpsc::error::TryRecvError::Empty)
            );
        }

        #[async_test]
        async fn test_pub_sub_reconnect_after_disconnect() {
            if !use_protocol().supports_resp3() {
                return;
            }

            // in this test we will subscribe to channels, then restart the server, and check that the connection
            // doesn't send disconnect message, but instead resubscribes automatically.

            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let ctx = TestClusterContext::new_insecure_with_cluster_client_builder(|builder| {
                builder.push_sender(tx.clone())
            });

            let ports: Vec<_> = ctx.get_ports();

            let (mut publish_conn, mut pubsub_conn) =
                join!(ctx.async_connection(), ctx.async_connection());
            let supports_redis_7 = ctx.supports(REDIS_CE_7_0);

            subscribe_to_channels(&mut pubsub_conn, &mut rx, supports_redis_7).await;

            println!("dropped");
            drop(ctx);

            // we expect 1 disconnect per connection to node. 2 connections * 3 node = 6 disconnects.
            for _ in 0..6 {
                let push = get_push(&mut rx).await.unwrap();
                assert_eq!(
                    push,
                    PushInfo {
                        kind: PushKind::Disconnection,
                        data: vec![]
                    }
                );
            }

            // recreate cluster
            let _cluster = RedisCluster::new(RedisClusterConfiguration {
                ports: ports.clone(),
                ..Default::default()
            });

            // verify that we didn't get any disconnect notices, and collect any early resubscriptions.
            let mut pushes = Vec::new();
            while let Ok(push) = rx.try_recv() {
                assert_ne!(push.kind, PushKind::Disconnection);
                pushes.push(push);
            }

            // the resubsriptions can be received in any order, so we assert without assuming order.
            let expected_pushes_count = if supports_redis_7 { 3 } else { 2 };
            while pushes.len() < expected_pushes_count {
                pushes.push(
                    get_push_with_timeout(&mut rx, Duration::from_secs(5))
                        .await
                        .unwrap(),
                );
            }
            // we expect only 3 resubscriptions.
            assert_matches!(rx.try_recv(), Err(_));
            assert!(pushes.contains(&PushInfo {
                kind: PushKind::Subscribe,
                data: vec![redis_value!("regular-phonewave"), redis_value!(1)]
            }));
            assert!(pushes.contains(&PushInfo {
                kind: PushKind::PSubscribe,
                data: vec![redis_value!("phonewave*"), redis_value!(2)]
            }));

            if supports_redis_7 {
                assert!(pushes.contains(&PushInfo {
                    kind: PushKind::SSubscribe,
                    data: vec![redis_value!("sphonewave"), redis_value!(1)]
                }));
            }

            check_publishing(&mut publish_conn, &mut rx, supports_redis_7).await;
        }

        #[async_test]
        async fn test_pub_sub_should_not_reconnect_if_subscription_failed() {
            if !use_protocol().supports_resp3() {
                return;
            }

            // in this test we will try to subscribe to a disconnected cluster, fail, and check that once the connection reconnects it won't try and resubscribe.
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let ctx = TestClusterContext::new_insecure_with_cluster_client_builder(|builder| {
                builder.push_sender(tx.clone())
            });

            let ports: Vec<_> = ctx.get_ports();

            let mut pubsub_conn = ctx.async_connection().await;

            drop(ctx);

            let err = pubsub_conn
                .subscribe("regular-phonewave")
                .await
                .unwrap_err();
            assert!(err.is_unrecoverable_error(), "{err:?}");

            // we expect 1 disconnect per connection to node.
            for _ in 0..3 {
                let push = rx
                    .recv()
                    .timeout(futures_time::time::Duration::from_millis(5))
                    .await
                    .unwrap();
                assert_eq!(
                    push,
                    Some(PushInfo {
                        kind: PushKind::Disconnection,
                        data: vec![]
                    })
                );
            }

            // recreate cluster
            let _cluster = RedisCluster::new(RedisClusterConfiguration {
                ports: ports.clone(),
                ..Default::default()
            });

            // verify that we didn't get any disconnect notices.
            assert_eq!(
                rx.try_recv(),
                Err(tokio::sync::mpsc::error::TryRecvError::Empty)
            );

            // send request to trigger reconnection.
            let _ = pubsub_conn
                .route_command(
                    cmd("PING"),
                    RoutingInfo::MultiNode((
                        MultipleNodeRoutingInfo::AllMasters,
                        Some(ResponsePolicy::AllSucceeded),
                    )),
                )
                .await
                .unwrap();

            // verify that we didn't get any subscription notices.
            assert_eq!(
                rx.try_recv(),
                Err(tokio::sync::mpsc::error::TryRecvError::Empty)
            );
        }

        // The scenarios build all of their names, and their probe key, from this tag. A cluster
        // connection holds a separate connection per node, so the tag is a hash tag that maps all
        // of the scenario's subscriptions, and its probe key, to the same slot and node.
        const CLUSTER_TAG: &str = "{issue-2423-cluster}";

        // Runs a scenario on a fresh cluster connection that passes its pushes to the returned
        // channel. Subscriptions on a cluster connection require RESP3.
        async fn assert_scenario_on_cluster(kind: SubscriptionKind, scenario: Scenario) {
            if !use_protocol().supports_resp3() {
                return;
            }

            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let ctx = TestClusterContext::new_with_cluster_client_builder(|builder| {
                builder.push_sender(tx.clone())
            });
            let conn = ctx.async_connection().await;

            assert_scenario_on(CLUSTER_TAG, kind, scenario, conn, &mut rx).await;
        }

        // https://github.com/redis-rs/redis-rs/issues/2423
        #[async_test]
        async fn test_pub_sub_subscribe_awaits_all_confirmations_issue_2423() {
            assert_scenario_on_cluster(SubscriptionKind::Channel, Scenario::Subscribe).await;
        }

        // https://github.com/redis-rs/redis-rs/issues/2423
        #[async_test]
        async fn test_pub_sub_psubscribe_awaits_all_confirmations_issue_2423() {
            assert_scenario_on_cluster(SubscriptionKind::Pattern, Scenario::Subscribe).await;
        }

        // https://github.com/redis-rs/redis-rs/issues/2423
        #[async_test]
        async fn test_pub_sub_unsubscribe_awaits_all_confirmations_issue_2423() {
            assert_scenario_on_cluster(SubscriptionKind::Channel, Scenario::Unsubscribe).await;
        }

        // https://github.com/redis-rs/redis-rs/issues/2423
        #[async_test]
        async fn test_pub_sub_punsubscribe_awaits_all_confirmations_issue_2423() {
            assert_scenario_on_cluster(SubscriptionKind::Pattern, Scenario::Unsubscribe).await;
        }

        // A zero-argument unsubscribe isn't routed by a key, so it is sent to a random node that
        // might not hold the tested subscriptions, and its confirmation count can't be derived.
        // Unsubscribing with explicit arguments is routed by the first argument's slot, so it is
        // served by the same connection as the subscription command.
        //
        // https://github.com/redis-rs/redis-rs/issues/2423
        #[async_test]
        async fn test_pub_sub_partial_unsubscribe_leaves_connection_usable_issue_2423() {
            assert_scenario_on_cluster(SubscriptionKind::Channel, Scenario::PartialUnsubscribe)
                .await;
        }

        // https://github.com/redis-rs/redis-rs/issues/2423
        #[async_test]
        async fn test_pub_sub_partial_punsubscribe_leaves_connection_usable_issue_2423() {
            assert_scenario_on_cluster(SubscriptionKind::Pattern, Scenario::PartialUnsubscribe)
                .await;
        }

        // https://github.com/redis-rs/redis-rs/issues/2423
        #[async_test]
        async fn test_pub_sub_multi_channel_ssubscribe_sunsubscribe_issue_2423() {
            if !use_protocol().supports_resp3() {
                return;
            }

            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let ctx = TestClusterContext::new_with_cluster_client_builder(|builder| {
                builder.push_sender(tx.clone())
            });
            skip_if_context_does_not_support!(ctx, REDIS_CE_7_0);

            let mut connection = ctx.async_connection().await;
            let mut request_conn = connection.clone();

            // The sharded channels share a hash tag, so they map to the same slot and node.
            let channel = "{issue-2423-shard}a";
            let channels = [channel, "{issue-2423-shard}b"];
            let stay = "{issue-2423-shard}stay";
            set_probe_key(&mut request_conn, channel).await;

            let mut command_conn = connection.clone();
            assert_requests_uncorrupted_during(
                command_conn.ssubscribe(&channels),
                &connection,
                channel,
            )
            .await;

            assert_push(
                &mut rx,
                PushKind::SSubscribe,
                vec![redis_value!(channel), redis_value!(1)],
            )
            .await;
            assert_push(
                &mut rx,
                PushKind::SSubscribe,
                vec![redis_value!(channels[1]), redis_value!(2)],
            )
            .await;

            // A sharded channel stays subscribed while the others are unsubscribed, so messages
            // are still passed.
            connection.ssubscribe(stay).await.unwrap();
            assert_push(
                &mut rx,
                PushKind::SSubscribe,
                vec![redis_value!(stay), redis_value!(3)],
            )
            .await;

            let mut command_conn = connection.clone();
            assert_requests_uncorrupted_during(
                command_conn.sunsubscribe(&channels),
                &connection,
                channel,
            )
            .await;

            // Both unsubscribe confirmations were passed to the push sender as well, and their
            // count includes the channel that stayed subscribed.
            assert_push(
                &mut rx,
                PushKind::SUnsubscribe,
                vec![redis_value!(channel), redis_value!(2)],
            )
            .await;
            assert_push(
                &mut rx,
                PushKind::SUnsubscribe,
                vec![redis_value!(channels[1]), redis_value!(1)],
            )
            .await;

            // The staying sharded channel still receives messages.
            let _: () = request_conn.spublish(stay, "banana").await.unwrap();
            assert_push(
                &mut rx,
                PushKind::SMessage,
                vec![redis_value!(stay), redis_value!("banana")],
            )
            .await;

            // The connection isn't left with unattributed confirmations, so it still works.
            assert_connection_usable(&mut connection, channel).await;
        }
    }

    #[cfg(feature = "tls-rustls")]
    mod mtls_test {
        use crate::support::mtls_test::create_cluster_client_from_cluster;

        use super::*;

        #[async_test]
        async fn test_async_cluster_basic_cmd_with_mtls() {
            let cluster = TestClusterContext::new_with_mtls();

            let client = create_cluster_client_from_cluster(&cluster, true).unwrap();
            let mut connection = client.get_async_connection().await.unwrap();
            cmd("SET")
                .arg("test")
                .arg("test_data")
                .exec_async(&mut connection)
                .await
                .unwrap();
            let res: String = cmd("GET")
                .arg("test")
                .clone()
                .query_async(&mut connection)
                .await
                .unwrap();
            assert_eq!(res, "test_data");
        }

        #[async_test]
        async fn test_async_cluster_should_not_connect_without_mtls_enabled() {
            let cluster = TestClusterContext::new_with_mtls();

            let client = create_cluster_client_from_cluster(&cluster, false).unwrap();
            let connection = client.get_async_connection().await;
            match cluster
                .cluster
                .servers
                .first()
                .unwrap()
                .connection_info()
                .addr()
            {
                redis::ConnectionAddr::TcpTls { .. } => {
                    if connection.is_ok() {
                        panic!(
                            "Must NOT be able to connect without client credentials if server accepts TLS"
                        );
                    }
                }
                _ => {
                    if let Err(e) = connection {
                        panic!(
                            "Must be able to connect without client credentials if server does NOT accept TLS: {e:?}"
                        );
                    }
                }
            }
        }
    }

    mod transaction {
        use std::sync::atomic::AtomicUsize;

        use futures::future::join;
        use redis::FromRedisValue;

        use super::*;

        async fn check_unwatched(con: &mut ClusterConnection) {
            let result = con
                .route_command(
                    cmd("CLIENT").arg("INFO").take(),
                    RoutingInfo::MultiNode((MultipleNodeRoutingInfo::AllNodes, None)),
                )
                .await
                .unwrap();
            let result = HashMap::<String, String>::from_redis_value_ref(&result).unwrap();
            for (_, info) in result {
                assert!(
                    // Info only contains "watch" since Redis 7.4 or valkey 8.
                    info.contains("watch=0") || !info.contains("watch"),
                    "{info}"
                );
            }
        }

        #[async_test]
        async fn test_simple_case_success() {
            let cluster = TestClusterContext::new();
            let mut con = cluster.async_connection().await;

            let res: Vec<usize> = redis::aio::transaction_async(
                con.clone(),
                &["{test}x", "{test}y"],
                |mut con, mut pipe| async move {
                    pipe.set("{test}x", 42)
                        .ignore()
                        .set("{test}y", 21)
                        .ignore()
                        .get("{test}x")
                        .get("{test}y")
                        .query_async(&mut con)
                        .await
                },
            )
            .await
            .unwrap();

            assert_eq!(&res, &[42, 21]);
            check_unwatched(&mut con).await;
        }

        #[async_test]
        async fn test_transaction_should_retry_on_watch() {
            let cluster = TestClusterContext::new();
            let con1 = cluster.async_connection().await;
            let mut con2 = cluster.async_connection().await;

            let attempts = Arc::new(AtomicUsize::new(0));
            let transaction_started = Arc::new(tokio::sync::Notify::new());
            let transaction_started_clone = transaction_started.clone();
            let interfering_value_sent = Arc::new(tokio::sync::Notify::new());
            let interfering_value_sent_clone = interfering_value_sent.clone();

            let res: Vec<usize> = join(
                redis::aio::transaction_async(
                    con1.clone(),
                    &["{test}x", "{test}y"],
                    |mut con, mut pipe| {
                        let attempts = attempts.clone();
                        let transaction_started = transaction_started_clone.clone();
                        let interfering_value_sent = interfering_value_sent_clone.clone();
                        async move {
                            transaction_started.notify_one();
                            interfering_value_sent.notified().await;
                            let res = attempts.fetch_add(1, Ordering::Relaxed);

                            pipe.set("{test}x", res)
                                .ignore()
                                .get("{test}x")
                                .query_async(&mut con)
                                .await
                        }
                    },
                ),
                async move {
                    transaction_started.notified().await;
                    () = con2.set("{test}x", "interfering_value").await.unwrap();
                    interfering_value_sent.notify_one();
                    // we do this again, in order to let the next transaction pass
                    interfering_value_sent.notify_one();
                },
            )
            .await
            .0
            .unwrap();

            assert_eq!(&res, &[1]);
            check_unwatched(&mut con1.clone()).await;
        }

        #[async_test]
        async fn test_transaction_should_retry_on_none_from_closure() {
            let cluster = TestClusterContext::new();
            let con = cluster.async_connection().await;

            let attempts = Arc::new(AtomicUsize::new(0));

            let res: Vec<usize> = redis::aio::transaction_async(
                con.clone(),
                &["{test}x", "{test}y"],
                |_con, _pipe| {
                    let attempts = attempts.clone();
                    async move {
                        let res = attempts.fetch_add(1, Ordering::Relaxed);

                        if res > 1 {
                            return Ok(Some(vec![res]));
                        }

                        Ok(None)
                    }
                },
            )
            .await
            .unwrap();

            assert_eq!(&res, &[2]);
            check_unwatched(&mut con.clone()).await;
        }

        #[async_test]
        async fn test_transaction_abort_if_internal_function_returns_error() {
            let cluster = TestClusterContext::new();
            let con = cluster.async_connection().await;
            let attempts = Arc::new(AtomicUsize::new(0));

            let res = redis::aio::transaction_async::<_, _, (), _, _>(
                con.clone(),
                &["z"],
                |_con, _pipe| {
                    let attempts = attempts.clone();
                    async move {
                        let curr_attempts = attempts.fetch_add(1, Ordering::SeqCst);

                        if curr_attempts > 1 {
                            return Err(redis::RedisError::from((
                                redis::ErrorKind::Io,
                                "Internal error",
                            )));
                        }

                        // this triggers a retry of the transaction
                        Ok(None)
                    }
                },
            )
            .await
            .unwrap_err();

            assert_eq!(
                res,
                redis::RedisError::from((redis::ErrorKind::Io, "Internal error",))
            );
            assert_eq!(attempts.load(Ordering::SeqCst), 3);
            check_unwatched(&mut con.clone()).await;
        }
    }

    fn nested_redirect_cluster_slots(name: &str, primary_port: u16) -> Value {
        Value::Array(vec![Value::Array(vec![
            Value::Int(0),
            Value::Int(16383),
            Value::Array(vec![
                Value::BulkString(name.as_bytes().to_vec()),
                Value::Int(primary_port as i64),
            ]),
        ])])
    }

    #[test]
    fn nested_redirects_are_fully_reset_before_slot_refresh_retry() {
        let name = "nested_redirects_are_fully_reset_before_slot_refresh_retry";
        let refreshed = Arc::new(AtomicBool::new(false));
        let stale_route_used = Arc::new(AtomicBool::new(false));
        let refreshed_in_handler = Arc::clone(&refreshed);
        let stale_route_used_in_handler = Arc::clone(&stale_route_used);

        let MockEnv {
            runtime,
            async_connection: mut connection,
            handler: _handler,
            ..
        } = MockEnv::with_client_builder(
            ClusterClient::builder(vec![&*format!("redis://{name}")]).retries(4),
            name,
            move |cmd, port| {
                if is_connection_check(cmd) {
                    return Err(Ok(Value::SimpleString("OK".into())));
                }

                if contains_slice(cmd, b"CLUSTER") && contains_slice(cmd, b"SLOTS") {
                    let primary_port = if refreshed_in_handler.load(Ordering::SeqCst) {
                        6382
                    } else {
                        6379
                    };
                    return Err(Ok(nested_redirect_cluster_slots(name, primary_port)));
                }

                if refreshed_in_handler.load(Ordering::SeqCst) && port != 6382 {
                    stale_route_used_in_handler.store(true, Ordering::SeqCst);
                    return Err(Ok(parse_redis_value(
                        b"-ERR stale redirect reused after refresh\r\n",
                    )
                    .unwrap()));
                }

                match port {
                    6379 if contains_slice(cmd, b"GET") => Err(Ok(parse_redis_value(
                        format!("-ASK 123 {name}:6380\r\n").as_bytes(),
                    )
                    .unwrap())),
                    6380 | 6381 if contains_slice(cmd, b"ASKING") => {
                        Err(Ok(Value::SimpleString("OK".into())))
                    }
                    6380 if contains_slice(cmd, b"GET") => Err(Ok(parse_redis_value(
                        format!("-ASK 123 {name}:6381\r\n").as_bytes(),
                    )
                    .unwrap())),
                    6381 if contains_slice(cmd, b"GET") => {
                        refreshed_in_handler.store(true, Ordering::SeqCst);
                        Err(Ok(parse_redis_value(
                            b"-READONLY You can't write against a read only replica.\r\n",
                        )
                        .unwrap()))
                    }
                    6382 if contains_slice(cmd, b"GET") => {
                        Err(Ok(Value::BulkString(b"ok".to_vec())))
                    }
                    _ => panic!(
                        "unexpected command on port {port}: {}",
                        String::from_utf8_lossy(cmd)
                    ),
                }
            },
        );

        let value = runtime
            .block_on(
                redis::cmd("GET")
                    .arg("key")
                    .query_async::<String>(&mut connection),
            )
            .expect("request should be rerouted through the refreshed slot map");

        assert_eq!(value, "ok");
        assert!(
            !stale_route_used.load(Ordering::SeqCst),
            "a nested redirect survived reset_routing and bypassed the refreshed slot map"
        );
    }
}
