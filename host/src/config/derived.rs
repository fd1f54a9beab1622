//! What other modules are handed, derived from the configuration: the plugins' limits
//! and how to reach the store.

use super::Config;

impl Config {
    /// The limits of plugin calls.
    pub fn plugin_limits(&self) -> crate::plugins::Limits {
        crate::plugins::Limits {
            fuel: self.plugin_fuel,
            timeout: self.plugin_timeout,
            memory: self.plugin_memory_mib * 1024 * 1024,
            max_output: self.plugin_max_output_kib * 1024,
            concurrency: self.plugin_concurrency,
            concurrency_per_org: self.plugin_concurrency_per_org,
            cache_disk: self.plugin_cache_mib * 1024 * 1024,
            // In memory, as much as on disk, at most 1 GiB.
            cache_memory: (self.plugin_cache_mib * 1024 * 1024).min(1 << 30) as usize,
        }
    }

    /// How to reach the store, unless Weir must manage its own Redis (`None`).
    pub fn store_settings(&self) -> Option<crate::store::Settings> {
        let target = match (&self.redis_url, self.redis_cluster.is_empty()) {
            (Some(url), _) => crate::store::Target::Single(url.clone()),
            (None, false) => crate::store::Target::Cluster(self.redis_cluster.clone()),
            (None, true) => return None,
        };
        Some(crate::store::Settings {
            target,
            prefix: self.redis_prefix.clone(),
            partitions: self.redis_partitions,
            wait_replicas: self.redis_wait_replicas,
            wait_timeout: std::time::Duration::from_secs(1),
            snapshots_per_org: crate::store::MAX_SNAPSHOTS_PER_ORG,
            history: self.history.is_some(),
        })
    }
}
