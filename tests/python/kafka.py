"""Reads a Kafka topic as a subscriber would, with confluent-kafka (librdkafka's client):

    kafka.py BOOTSTRAP read TOPIC COUNT   every record of TOPIC (waits for at least COUNT),
                                          as JSON: partition, offset, key, value, headers
    kafka.py BOOTSTRAP held TOPIC         how many records TOPIC holds (its partitions' ends)
"""

import json
import sys
import time

from confluent_kafka import Consumer, KafkaError, TopicPartition


def consumer(bootstrap):
    return Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": "weir-tests",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "log_level": 3,
    })


def partitions(c, topic):
    meta = c.list_topics(topic, timeout=10)
    return sorted(meta.topics[topic].partitions)


def held(bootstrap, topic):
    c = consumer(bootstrap)
    total = 0
    for p in partitions(c, topic):
        low, high = c.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
        total += high - low
    c.close()
    return total


def read(bootstrap, topic, count):
    c = consumer(bootstrap)
    c.assign([TopicPartition(topic, p, 0) for p in partitions(c, topic)])
    records, deadline = [], time.time() + 30
    while len(records) < count and time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                continue
            raise SystemExit(f"consumer error: {m.error()}")
        records.append({
            "partition": m.partition(),
            "offset": m.offset(),
            "key": m.key().decode() if m.key() is not None else None,
            "value": m.value().decode(),
            "headers": {k: v.decode() for k, v in (m.headers() or [])},
        })
    c.close()
    return records


def main():
    bootstrap, command, topic = sys.argv[1:4]
    if command == "read":
        print(json.dumps(read(bootstrap, topic, int(sys.argv[4]))))
    elif command == "held":
        print(held(bootstrap, topic))
    else:
        raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    main()
