"""Plain Cyclone DDS 11 peer (PyPI `cyclonedds`, no ROS) of the migration test of a message on
its way to the old host (crates/roslite-wasm/tests/migration.rs), following the ROS 2 wire
conventions (DDS topics `rt/numbers_in` and `rt/numbers_out`, type
`std_msgs::msg::dds_::String_`, plain CDR, participant USER_DATA `enclave=/;`): once both
topics matched, for each line N read from standard input it writes "number N: hello ünïcode"
on /numbers_in, and it prints each sample heard on /numbers_out as `REPLY <data>`. Both are
reliable and volatile, keep-last 100. Ends when its input ends.

    cyclone_numbers.py

The domain is ROS_DOMAIN_ID (default 0). Configure the network with CYCLONEDDS_URI (the test
pins it to `lo`).
"""
import os
import sys
import threading
import time
from dataclasses import dataclass

from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration


@dataclass
class String_(IdlStruct, typename="std_msgs::msg::dds_::String_"):
    data: str


def endpoint_qos():
    return Qos(
        Policy.Reliability.Reliable(max_blocking_time=duration(milliseconds=100)),
        Policy.Durability.Volatile,
        Policy.History.KeepLast(100),
        # ROS 2 user data is plain CDR (XCDR1) only.
        Policy.DataRepresentation(use_cdrv0_representation=True),
    )


def main():
    domain = int(os.environ.get("ROS_DOMAIN_ID") or 0)
    participant = DomainParticipant(domain, qos=Qos(Policy.Userdata(data=b"enclave=/;")))
    writer = DataWriter(participant, Topic(participant, "rt/numbers_in", String_), qos=endpoint_qos())
    reader = DataReader(participant, Topic(participant, "rt/numbers_out", String_), qos=endpoint_qos())

    def replies():
        while True:
            for sample in reader.take(N=16):
                # take() also returns invalid samples (state changes) with no payload.
                if isinstance(sample, String_):
                    print("REPLY", sample.data, flush=True)
            time.sleep(0.005)

    threading.Thread(target=replies, daemon=True).start()
    # Numbers are read only once both topics matched (a volatile reader misses what came
    # before), and a moment more for the other side to have discovered us too.
    while not writer.get_matched_subscriptions() or not reader.get_matched_publications():
        time.sleep(0.05)
    time.sleep(1.0)
    for line in sys.stdin:
        number = line.strip()
        if number:
            writer.write(String_(data=f"number {number}: hello ünïcode"))


if __name__ == "__main__":
    main()
