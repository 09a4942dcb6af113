"""Plain Cyclone DDS 11 peer (PyPI `cyclonedds`, no ROS) on a keyed ROS 2 topic: DDS topic
`rt/keyed`, type `test_msgs::msg::dds_::KeyedLong_` (`@key int32 key; int32 value;`, plain
CDR), reliable, volatile, keep last 10.

    cyclone_keyed.py talk <seconds>
        writes KeyedLong {key: n % 2, value: n} at 10 Hz for `seconds`.
    cyclone_keyed.py listen <seconds> <count> [<min key>]
        prints `HEARD <key> <value>` per sample whose key is at least `min key` (default 0) and
        exits after `count` of them or `seconds`.

The domain is ROS_DOMAIN_ID (default 0). Configure the network with CYCLONEDDS_URI.
"""
import os
import sys
import time
from dataclasses import dataclass

from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.annotations import key
from cyclonedds.idl.types import int32
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration


@dataclass
class KeyedLong_(IdlStruct, typename="test_msgs::msg::dds_::KeyedLong_"):
    key: int32
    key("key")
    value: int32


def main():
    qos = Qos(
        Policy.Reliability.Reliable(max_blocking_time=duration(milliseconds=100)),
        Policy.Durability.Volatile,
        Policy.History.KeepLast(10),
        Policy.DataRepresentation(use_cdrv0_representation=True),
    )
    domain = int(os.environ.get("ROS_DOMAIN_ID") or 0)
    participant = DomainParticipant(domain, qos=Qos(Policy.Userdata(data=b"enclave=/;")))
    topic = Topic(participant, "rt/keyed", KeyedLong_)
    mode, seconds = sys.argv[1], float(sys.argv[2])
    end = time.monotonic() + seconds
    if mode == "talk":
        writer = DataWriter(participant, topic, qos=qos)
        n = 0
        while time.monotonic() < end:
            n += 1
            writer.write(KeyedLong_(key=n % 2, value=n))
            time.sleep(0.1)
    elif mode == "listen":
        count = int(sys.argv[3])
        min_key = int(sys.argv[4]) if len(sys.argv) > 4 else 0
        reader = DataReader(participant, topic, qos=qos)
        heard = 0
        while time.monotonic() < end and heard < count:
            for sample in reader.take(N=16):
                # take() also returns invalid samples (instance state changes).
                if isinstance(sample, KeyedLong_) and sample.key >= min_key:
                    print("HEARD", sample.key, sample.value, flush=True)
                    heard += 1
            time.sleep(0.02)
    else:
        sys.exit(f"unknown mode {mode!r}: expected talk or listen")


main()
