"""Plain Cyclone DDS 11 peer (PyPI `cyclonedds`, no ROS) that follows the ROS 2 wire conventions
for /chatter: DDS topic `rt/chatter`, type `std_msgs::msg::dds_::String_` (one `string data`,
plain CDR), reliable, volatile, participant USER_DATA `enclave=/;` as rmw_cyclonedds sends it.

    cyclone_chatter.py listen <seconds> <count>
        prints `HEARD <data>` per sample, `MATCHED <n>` (writers matched at the end) and
        `RESULT <count>`; exits after `count` samples or `seconds`.
    cyclone_chatter.py listen-all <seconds> <count>
        as `listen`, with a KEEP_ALL reader taken from as fast as it fills (for bursts);
        prints `READY` once its reader exists.
    cyclone_chatter.py stream-all <seconds>
        a KEEP_ALL reader that prints `READY` once it exists, then `HEARD <data>` per sample
        as it is taken and `LOST <total_count>` when Cyclone reports samples lost
        (SAMPLE_LOST); exits after the sample `end` or `seconds`, printing `RESULT <count>`.
    cyclone_chatter.py talk-all <count> <big_every> <big_size>
        a KEEP_ALL writer (max_blocking_time 10 s): once a reader matched (and half a second more, for the other side to
        match it too), writes `n 1` .. `n <count>` one a millisecond, every <big_every>th
        followed by a space and <big_size> `x`, then `end`; waits until every reader
        acknowledged them all (at most 60 s) and prints `DONE <acknowledged: True|False>`.
    cyclone_chatter.py late-listen <seconds> <count>
        a transient-local KEEP_ALL reader (a late joiner): prints `READY`, then `HEARD <data>`
        per sample as it is taken; exits after <count> samples or <seconds>, printing
        `RESULT <count>`.
    cyclone_chatter.py late-talk <count> <big_every> <big_size>
        a transient-local KEEP_ALL writer that keeps its whole history for late joiners: writes
        `hist 1` .. `hist <count>` (every <big_every>th followed by a space and <big_size> `x`)
        before anyone matched, prints `HISTORY <count>`, and on the line `go` on its input
        writes `live 1`, `live 2`, ... every 100 ms until its input ends.
    cyclone_chatter.py burst <count> <size> <depth>
        a KEEP_LAST <depth> writer: once a reader matched (and half a second more), writes
        `from cyclone <n> ` and <size> `x`, n = 1 .. <count>, back to back, prints
        `BURST <count>`, and stays (answering repairs) until its input ends.
    cyclone_chatter.py talk <seconds>
        publishes `from cyclone <n>` at 10 Hz for `seconds`.

The domain is ROS_DOMAIN_ID (default 0). Configure the network with CYCLONEDDS_URI (the tests
pin it to `lo`).
"""
import os
import sys
import threading
import time
from dataclasses import dataclass

from cyclonedds.core import Listener, Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration


@dataclass
class String_(IdlStruct, typename="std_msgs::msg::dds_::String_"):
    data: str


def endpoint_qos(history=None, max_blocking_ms=100):
    return Qos(
        Policy.Reliability.Reliable(max_blocking_time=duration(milliseconds=max_blocking_ms)),
        Policy.Durability.Volatile,
        history or Policy.History.KeepLast(10),
        # ROS 2 user data is plain CDR (XCDR1) only.
        Policy.DataRepresentation(use_cdrv0_representation=True),
    )


def late_joiner_qos(durability_service=False):
    policies = [
        Policy.Reliability.Reliable(max_blocking_time=duration(seconds=10)),
        Policy.Durability.TransientLocal,
        Policy.History.KeepAll,
        Policy.DataRepresentation(use_cdrv0_representation=True),
    ]
    if durability_service:
        # What a transient-local writer keeps for late joiners: Cyclone's default is the
        # newest sample only.
        policies.append(
            Policy.DurabilityService(
                cleanup_delay=0,
                history=Policy.History.KeepAll,
                max_samples=-1,
                max_instances=-1,
                max_samples_per_instance=-1,
            )
        )
    return Qos(*policies)


def main():
    mode = sys.argv[1]
    domain = int(os.environ.get("ROS_DOMAIN_ID") or 0)
    participant = DomainParticipant(domain, qos=Qos(Policy.Userdata(data=b"enclave=/;")))
    topic = Topic(participant, "rt/chatter", String_)
    if mode in ("listen", "listen-all"):
        seconds, count = float(sys.argv[2]), int(sys.argv[3])
        burst = mode == "listen-all"
        history = Policy.History.KeepAll if burst else None
        reader = DataReader(participant, topic, qos=endpoint_qos(history))
        if burst:
            print("READY", flush=True)
        got = []
        end = time.monotonic() + seconds
        while time.monotonic() < end and len(got) < count:
            for sample in reader.take(N=1000 if burst else 16):
                # take() also returns invalid samples (state changes) with no payload.
                if isinstance(sample, String_):
                    got.append(sample.data)
            time.sleep(0.002 if burst else 0.02)
        for data in got:
            print("HEARD", data, flush=True)
        print("MATCHED", len(reader.get_matched_publications()), flush=True)
        print("RESULT", len(got), flush=True)
    elif mode == "stream-all":
        seconds = float(sys.argv[2])

        class ReportLost(Listener):
            def on_sample_lost(self, reader, status):
                print("LOST", status.total_count, flush=True)

        reader = DataReader(
            participant,
            topic,
            qos=endpoint_qos(Policy.History.KeepAll),
            listener=ReportLost(),
        )
        print("READY", flush=True)
        got = 0
        ended = False
        end = time.monotonic() + seconds
        while time.monotonic() < end and not ended:
            for sample in reader.take(N=1000):
                if isinstance(sample, String_):
                    got += 1
                    print("HEARD", sample.data, flush=True)
                    ended = ended or sample.data == "end"
            time.sleep(0.002)
        print("RESULT", got, flush=True)
    elif mode == "talk-all":
        count, big_every, big_size = (int(a) for a in sys.argv[2:5])
        # Under loss a repair takes a heartbeat round or more, and Cyclone holds a write while
        # its history holds over 500 kB unacknowledged: with the default 100 ms a write times
        # out at 10 % loss, against a Cyclone reader as against any other.
        writer = DataWriter(
            participant,
            topic,
            qos=endpoint_qos(Policy.History.KeepAll, max_blocking_ms=10_000),
        )
        while len(writer.get_matched_subscriptions()) < 1:
            time.sleep(0.05)
        time.sleep(0.5)
        padding = " " + "x" * big_size
        for n in range(1, count + 1):
            big = big_every > 0 and n % big_every == 0
            writer.write(String_(data=f"n {n}" + (padding if big else "")))
            time.sleep(0.001)
        writer.write(String_(data="end"))
        print("DONE", writer.wait_for_acks(duration(seconds=60)), flush=True)
    elif mode == "late-listen":
        seconds, count = float(sys.argv[2]), int(sys.argv[3])
        reader = DataReader(participant, topic, qos=late_joiner_qos())
        print("READY", flush=True)
        got = 0
        end = time.monotonic() + seconds
        while time.monotonic() < end and got < count:
            for sample in reader.take(N=1000):
                if isinstance(sample, String_):
                    got += 1
                    print("HEARD", sample.data, flush=True)
            time.sleep(0.002)
        print("RESULT", got, flush=True)
    elif mode == "late-talk":
        count, big_every, big_size = (int(a) for a in sys.argv[2:5])
        writer = DataWriter(participant, topic, qos=late_joiner_qos(durability_service=True))
        padding = " " + "x" * big_size
        for n in range(1, count + 1):
            big = big_every > 0 and n % big_every == 0
            writer.write(String_(data=f"hist {n}" + (padding if big else "")))
        print("HISTORY", count, flush=True)
        commands = []
        threading.Thread(
            target=lambda: (commands.extend(sys.stdin), commands.append(None)), daemon=True
        ).start()
        while "go\n" not in commands and None not in commands:
            time.sleep(0.01)
        n = 0
        while None not in commands:
            n += 1
            writer.write(String_(data=f"live {n}"))
            time.sleep(0.1)
    elif mode == "burst":
        count, size, depth = (int(a) for a in sys.argv[2:5])
        writer = DataWriter(
            participant, topic, qos=endpoint_qos(Policy.History.KeepLast(depth))
        )
        while len(writer.get_matched_subscriptions()) < 1:
            time.sleep(0.05)
        time.sleep(0.5)
        padding = "x" * size
        for n in range(1, count + 1):
            writer.write(String_(data=f"from cyclone {n} {padding}"))
        print("BURST", count, flush=True)
        for _ in sys.stdin:
            pass
    elif mode == "talk":
        seconds = float(sys.argv[2])
        writer = DataWriter(participant, topic, qos=endpoint_qos())
        end = time.monotonic() + seconds
        n = 0
        while time.monotonic() < end:
            n += 1
            writer.write(String_(data=f"from cyclone {n}"))
            time.sleep(0.1)
    else:
        sys.exit(
            f"unknown mode {mode!r}: use `listen <seconds> <count>`, "
            "`listen-all <seconds> <count>`, `stream-all <seconds>`, "
            "`talk-all <count> <big_every> <big_size>`, `late-listen <seconds> <count>`, "
            "`late-talk <count> <big_every> <big_size>`, `burst <count> <size> <depth>` or "
            "`talk <seconds>`"
        )


if __name__ == "__main__":
    main()
