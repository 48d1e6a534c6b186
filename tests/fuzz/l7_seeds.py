#!/usr/bin/python3
"""Writes the database fuzz targets' seed corpus from the unit tests' captures.

tests/unit/data/l7/PREFIX_*.cap (capture_proxy.py's format) -> tests/fuzz/corpus/fuzz_l7_NAME/,
one seed per connection, in fuzz_l7_db.h's input format (records of direction, length, data),
cut to 4 KiB. Run from the repository root.
"""
import glob
import os

PREFIXES = {"postgres": "pg", "mysql": "my", "redis": "redis", "memcached": "mc",
            "mongo": "mongo", "clickhouse": "clickhouse", "kafka": "kafka",
            "zookeeper": "zk", "nats": "nats",
            "rabbitmq": "amqp", "cassandra": "cql",
            "http2": "h2"}
LIMIT = 4096


def main():
    for proto, prefix in PREFIXES.items():
        out_dir = f"tests/fuzz/corpus/fuzz_l7_{proto}"
        os.makedirs(out_dir, exist_ok=True)
        for cap in sorted(glob.glob(f"tests/unit/data/l7/{prefix}_*.cap")):
            conns = {}
            for line in open(cap):
                head, hexdata = line.split()
                conn, direction = int(head[:-1]), 0 if head[-1] == ">" else 1
                data = bytes.fromhex(hexdata)
                seed = conns.setdefault(conn, bytearray())
                for i in range(0, len(data), 255):
                    part = data[i:i + 255]
                    seed += bytes([direction, len(part)]) + part
            for conn, seed in conns.items():
                name = f"{os.path.basename(cap)[:-4]}_{conn}"
                with open(os.path.join(out_dir, name), "wb") as f:
                    f.write(seed[:LIMIT])


if __name__ == "__main__":
    main()
