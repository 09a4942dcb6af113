"""Plain Cyclone DDS 11 peer (PyPI `cyclonedds`, no ROS) that speaks ROS 2 services the way
rmw_cyclonedds does: request and reply payloads begin with a 16-byte header {u64 client id,
i64 sequence number} before the message (docs/ros2-interop.md §5), and the client announces
`clientid=<id>;` in the USER_DATA of its request writer and reply reader so the server can
check its reply reader is matched before replying.

    cyclone_service.py serve <seconds> <count>
        serves std_srvs/SetBool on /motor_power; prints `MATCHED` once its request reader and
        reply writer both matched a client, `SERVED <data>` per request and `RESULT <n>`;
        exits after `count` requests or `seconds`.
    cyclone_service.py call <seconds> <count>
        calls /motor_power `count` times (data alternately true/false) and prints
        `REPLY <success> <message>` per reply to its own requests, `FOREIGN <n>` (replies
        addressed to another client id) and `RESULT <replies>`.

Configure the network with CYCLONEDDS_URI (the tests pin it to `lo`).
"""
import os
import sys
import time
from dataclasses import dataclass

from cyclonedds.core import Qos, Policy
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import uint64, int64
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration


@dataclass
class SetBool_Request_(IdlStruct, typename="std_srvs::srv::dds_::SetBool_Request_"):
    client_id: uint64
    seq: int64
    data: bool


@dataclass
class SetBool_Response_(IdlStruct, typename="std_srvs::srv::dds_::SetBool_Response_"):
    client_id: uint64
    seq: int64
    success: bool
    message: str


def endpoint_qos(user_data=None):
    policies = [
        Policy.Reliability.Reliable(max_blocking_time=duration(milliseconds=100)),
        Policy.Durability.Volatile,
        Policy.History.KeepLast(10),
        Policy.DataRepresentation(use_cdrv0_representation=True),
    ]
    if user_data is not None:
        policies.append(Policy.Userdata(data=user_data))
    return Qos(*policies)


def take_valid(reader, cls):
    return [s for s in reader.take(N=16) if isinstance(s, cls)]


def serve(participant, seconds, count):
    requests = Topic(participant, "rq/motor_powerRequest", SetBool_Request_)
    replies = Topic(participant, "rr/motor_powerReply", SetBool_Response_)
    reader = DataReader(participant, requests, qos=endpoint_qos())
    writer = DataWriter(participant, replies, qos=endpoint_qos())
    print("READY", flush=True)
    served = 0
    end = time.monotonic() + seconds
    matched = False
    while time.monotonic() < end and served < count:
        if (
            not matched
            and reader.get_matched_publications()
            and writer.get_matched_subscriptions()
        ):
            # A client's requests reach this volatile reader only from its match on, and a
            # reply reaches the client's reader only once this writer matched it; a test waits
            # for this line before calling.
            matched = True
            print("MATCHED", flush=True)
        for request in take_valid(reader, SetBool_Request_):
            served += 1
            print("SERVED", request.data, flush=True)
            writer.write(SetBool_Response_(
                client_id=request.client_id,
                seq=request.seq,
                success=request.data,
                message="motor on" if request.data else "motor off",
            ))
        time.sleep(0.005)
    time.sleep(0.5)
    print("RESULT", served, flush=True)


def call(participant, seconds, count):
    client_id = int.from_bytes(os.urandom(8), "little")
    # Any 16 unique bytes do as the id; rmw_cyclonedds uses the request writer's GUID.
    guid = os.urandom(16)
    clientid = ("clientid=%2x" % guid[0] + "".join(".%x" % b for b in guid[1:]) + ";").encode()
    requests = Topic(participant, "rq/motor_powerRequest", SetBool_Request_)
    replies = Topic(participant, "rr/motor_powerReply", SetBool_Response_)
    writer = DataWriter(participant, requests, qos=endpoint_qos(clientid))
    reader = DataReader(participant, replies, qos=endpoint_qos(clientid))
    end = time.monotonic() + seconds
    while time.monotonic() < end and not (
        writer.get_matched_subscriptions() and reader.get_matched_publications()
    ):
        time.sleep(0.05)
    got, foreign = 0, 0
    for i in range(1, count + 1):
        writer.write(SetBool_Request_(client_id=client_id, seq=i, data=(i % 2 == 1)))
        answered = False
        while time.monotonic() < end and not answered:
            for reply in take_valid(reader, SetBool_Response_):
                if reply.client_id != client_id:
                    foreign += 1
                    continue
                if reply.seq == i:
                    answered = True
                    got += 1
                    print("REPLY", reply.success, reply.message, flush=True)
            time.sleep(0.005)
    print("FOREIGN", foreign, flush=True)
    print("RESULT", got, flush=True)


def main():
    mode, seconds, count = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    participant = DomainParticipant(0, qos=Qos(Policy.Userdata(data=b"enclave=/;")))
    if mode == "serve":
        serve(participant, seconds, count)
    else:
        call(participant, seconds, count)


if __name__ == "__main__":
    main()
