"""A consumer of Weir's AWS destinations in the tests, against the moto emulator (boto3).

aws.py ENDPOINT create-queue NAME            -> the queue's URL (NAME ending .fifo: a FIFO queue)
aws.py ENDPOINT receive QUEUE_URL N          -> JSON: up to N messages {body, attributes, group}
aws.py ENDPOINT create-topic NAME QUEUE_URL  -> the topic's ARN, the queue subscribed (raw delivery)
aws.py ENDPOINT route-bus QUEUE_URL          -> the default bus's events go to the queue
aws.py ENDPOINT create-stream NAME SHARDS     -> a Kinesis data stream of SHARDS shards
aws.py ENDPOINT read-stream NAME N           -> JSON: at least N records (waiting up to 15 s), each
                                                {data, partition_key, shard, sequence}, in each
                                                shard's order
"""
import json
import sys
import time

import boto3

endpoint, command, *args = sys.argv[1:]
session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1")
sqs = session.client("sqs", endpoint_url=endpoint)

if command == "create-queue":
    name = args[0]
    attributes = {"FifoQueue": "true"} if name.endswith(".fifo") else {}
    print(sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"])
elif command == "receive":
    queue_url, wanted = args[0], int(args[1])
    got = []
    deadline = time.time() + 15
    while len(got) < wanted and time.time() < deadline:
        answer = sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                     MessageAttributeNames=["All"], AttributeNames=["All"])
        for m in answer.get("Messages", []):
            attributes = {k: v.get("StringValue") for k, v in m.get("MessageAttributes", {}).items()}
            got.append({"body": m["Body"], "attributes": attributes,
                        "group": m.get("Attributes", {}).get("MessageGroupId")})
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=m["ReceiptHandle"])
    print(json.dumps(got))
elif command == "create-topic":
    name, queue_url = args
    sns = session.client("sns", endpoint_url=endpoint)
    arn = sns.create_topic(Name=name)["TopicArn"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=queue_arn, Attributes={"RawMessageDelivery": "true"})
    print(arn)
elif command == "route-bus":
    queue_url = args[0]
    events = session.client("events", endpoint_url=endpoint)
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="to-queue", EventPattern=json.dumps({"source": ["acme.weir"]}))
    events.put_targets(Rule="to-queue", Targets=[{"Id": "q", "Arn": queue_arn}])
    print("ok")
elif command == "create-stream":
    name, shards = args[0], int(args[1])
    kinesis = session.client("kinesis", endpoint_url=endpoint)
    kinesis.create_stream(StreamName=name, ShardCount=shards)
    kinesis.get_waiter("stream_exists").wait(StreamName=name, WaiterConfig={"Delay": 0.2, "MaxAttempts": 50})
    print(name)
elif command == "read-stream":
    name, wanted = args[0], int(args[1])
    kinesis = session.client("kinesis", endpoint_url=endpoint)
    deadline = time.time() + 15
    while True:
        got = []
        for shard in kinesis.list_shards(StreamName=name)["Shards"]:
            shard_id = shard["ShardId"]
            it = kinesis.get_shard_iterator(StreamName=name, ShardId=shard_id, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
            while it:
                answer = kinesis.get_records(ShardIterator=it, Limit=1000)
                for r in answer["Records"]:
                    got.append({"data": r["Data"].decode(), "partition_key": r["PartitionKey"],
                                "shard": shard_id, "sequence": r["SequenceNumber"]})
                it = answer.get("NextShardIterator") if answer["Records"] else None
        if len(got) >= wanted or time.time() > deadline:
            break
        time.sleep(0.2)
    print(json.dumps(got))
else:
    sys.exit(f"unknown command {command}")
