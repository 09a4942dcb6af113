"""Plain Cyclone DDS 11 peer (PyPI `cyclonedds`, no ROS) that serves or calls the ROS 2 action
/fibonacci (test_msgs/action/Fibonacci) laid out as rcl_action lays it out, its services
correlated the way rmw_cyclonedds correlates them: request and reply payloads begin with a
16-byte header {u64 client id, i64 sequence number} before the message (docs/ros2-interop.md
§5), and each client announces `clientid=<id>;` in the USER_DATA of its request writer and reply
reader. No ROS 2 wheel ships rmw_cyclonedds_cpp, so this peer stands in for one.

    cyclone_action.py serve <seconds>
        serves /fibonacci until `seconds` pass, as `action_peer.py serve` does: rejects
        negative orders; order 1000 publishes [0, 1] once and waits for a cancel request, then
        ends canceled; order 2000 publishes [0, 1] and holds the goal; any other order
        publishes the sequence after every step and succeeds. Prints READY once its endpoints
        exist, MATCHED once each has matched the client's, and `GOAL <order>` per accepted
        goal.
    cyclone_action.py client <seconds>
        waits for /fibonacci and drives it: a goal of order 10 (FEEDBACK_COUNT, RESULT), a
        goal of order -1 (REJECTED), a goal of order 1000 canceled after its first feedback
        (CANCEL, CANCELED_RESULT, then CANCEL_AGAIN for a second request), and prints
        FOREIGN (replies addressed to another client id, none expected) and DONE.

Configure the network with CYCLONEDDS_URI (the tests pin it to `lo`).
"""
import os
import sys
import time
from dataclasses import dataclass, field

from cyclonedds.core import Qos, Policy
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import array, int8, int32, int64, sequence, uint8, uint32, uint64
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

UNTIL_CANCELED = 1000
HOLD = 2000

# action_msgs/msg/GoalStatus
ACCEPTED, EXECUTING, CANCELING, SUCCEEDED, CANCELED, ABORTED = 1, 2, 3, 4, 5, 6
# action_msgs/srv/CancelGoal
ERROR_NONE, ERROR_REJECTED, ERROR_UNKNOWN_GOAL_ID, ERROR_GOAL_TERMINATED = 0, 1, 2, 3


@dataclass
class UUID_(IdlStruct, typename="unique_identifier_msgs::msg::dds_::UUID_"):
    uuid: array[uint8, 16]


@dataclass
class Time_(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    sec: int32
    nanosec: uint32


@dataclass
class GoalInfo_(IdlStruct, typename="action_msgs::msg::dds_::GoalInfo_"):
    goal_id: UUID_
    stamp: Time_


@dataclass
class GoalStatus_(IdlStruct, typename="action_msgs::msg::dds_::GoalStatus_"):
    goal_info: GoalInfo_
    status: int8


@dataclass
class GoalStatusArray_(IdlStruct, typename="action_msgs::msg::dds_::GoalStatusArray_"):
    status_list: sequence[GoalStatus_]


# Requests and replies: the request header's two fields first, then the message's.
@dataclass
class SendGoal_Request_(IdlStruct, typename="test_msgs::action::dds_::Fibonacci_SendGoal_Request_"):
    client_id: uint64
    seq: int64
    goal_id: UUID_
    order: int32


@dataclass
class SendGoal_Response_(IdlStruct, typename="test_msgs::action::dds_::Fibonacci_SendGoal_Response_"):
    client_id: uint64
    seq: int64
    accepted: bool
    stamp: Time_


@dataclass
class GetResult_Request_(IdlStruct, typename="test_msgs::action::dds_::Fibonacci_GetResult_Request_"):
    client_id: uint64
    seq: int64
    goal_id: UUID_


@dataclass
class GetResult_Response_(IdlStruct, typename="test_msgs::action::dds_::Fibonacci_GetResult_Response_"):
    client_id: uint64
    seq: int64
    status: int8
    sequence: sequence[int32]


@dataclass
class CancelGoal_Request_(IdlStruct, typename="action_msgs::srv::dds_::CancelGoal_Request_"):
    client_id: uint64
    seq: int64
    goal_info: GoalInfo_


@dataclass
class CancelGoal_Response_(IdlStruct, typename="action_msgs::srv::dds_::CancelGoal_Response_"):
    client_id: uint64
    seq: int64
    return_code: int8
    goals_canceling: sequence[GoalInfo_]


@dataclass
class FeedbackMessage_(IdlStruct, typename="test_msgs::action::dds_::Fibonacci_FeedbackMessage_"):
    goal_id: UUID_
    sequence: sequence[int32]


def qos(durability=Policy.Durability.Volatile, depth=10, user_data=None):
    policies = [
        Policy.Reliability.Reliable(max_blocking_time=duration(milliseconds=100)),
        durability,
        Policy.History.KeepLast(depth),
        Policy.DataRepresentation(use_cdrv0_representation=True),
    ]
    if user_data is not None:
        policies.append(Policy.Userdata(data=user_data))
    return Qos(*policies)


STATUS_QOS = dict(durability=Policy.Durability.TransientLocal, depth=1)


def take(reader, cls):
    return [s for s in reader.take(N=64) if isinstance(s, cls)]


def fibonacci(order):
    sequence_ = [0, 1]
    for i in range(1, max(order, 1)):
        sequence_.append(sequence_[i] + sequence_[i - 1])
    return sequence_


def now_stamp():
    ns = time.time_ns()
    return Time_(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def service_topics(participant, name, request, response):
    return (
        Topic(participant, f"rq/fibonacci/_action/{name}Request", request),
        Topic(participant, f"rr/fibonacci/_action/{name}Reply", response),
    )


class Goal:
    def __init__(self, goal_id, order, stamp):
        self.goal_id = goal_id
        self.order = order
        self.stamp = stamp
        self.status = EXECUTING
        self.sequence = [0, 1]
        self.step = 1
        self.fed_back = False
        self.waiting = []  # (client_id, seq) of result requests before the end

    def info(self):
        return GoalInfo_(goal_id=UUID_(uuid=list(self.goal_id)), stamp=self.stamp)


def serve(participant, seconds):
    rq, rr = service_topics(participant, "send_goal", SendGoal_Request_, SendGoal_Response_)
    goal_reader, goal_writer = DataReader(participant, rq, qos=qos()), DataWriter(participant, rr, qos=qos())
    rq, rr = service_topics(participant, "cancel_goal", CancelGoal_Request_, CancelGoal_Response_)
    cancel_reader, cancel_writer = DataReader(participant, rq, qos=qos()), DataWriter(participant, rr, qos=qos())
    rq, rr = service_topics(participant, "get_result", GetResult_Request_, GetResult_Response_)
    result_reader, result_writer = DataReader(participant, rq, qos=qos()), DataWriter(participant, rr, qos=qos())
    feedback_writer = DataWriter(
        participant, Topic(participant, "rt/fibonacci/_action/feedback", FeedbackMessage_), qos=qos())
    status_writer = DataWriter(
        participant, Topic(participant, "rt/fibonacci/_action/status", GoalStatusArray_), qos=qos(**STATUS_QOS))
    goals = {}

    def publish_status():
        status_writer.write(GoalStatusArray_(status_list=[
            GoalStatus_(goal_info=g.info(), status=g.status) for g in goals.values()]))

    def feedback(goal):
        feedback_writer.write(FeedbackMessage_(goal_id=UUID_(uuid=list(goal.goal_id)), sequence=goal.sequence))

    def end(goal, status):
        goal.status = status
        publish_status()
        for client_id, seq in goal.waiting:
            result_writer.write(GetResult_Response_(
                client_id=client_id, seq=seq, status=status, sequence=goal.sequence))
        goal.waiting = []

    print("READY", flush=True)
    readers = (goal_reader, cancel_reader, result_reader)
    writers = (goal_writer, cancel_writer, result_writer, feedback_writer, status_writer)
    matched = False
    end_at = time.monotonic() + seconds
    while time.monotonic() < end_at:
        if not matched and all(r.get_matched_publications() for r in readers) and all(
                w.get_matched_subscriptions() for w in writers):
            # A client's requests reach these volatile readers, and feedback reaches it, only
            # from their matches on: a test waits for this line before sending goals.
            matched = True
            print("MATCHED", flush=True)
        for request in take(goal_reader, SendGoal_Request_):
            goal_id = bytes(request.goal_id.uuid)
            accept = request.order >= 0 and goal_id not in goals
            stamp = now_stamp() if accept else Time_(sec=0, nanosec=0)
            if accept:
                goals[goal_id] = Goal(goal_id, request.order, stamp)
                print("GOAL", request.order, flush=True)
            goal_writer.write(SendGoal_Response_(
                client_id=request.client_id, seq=request.seq, accepted=accept, stamp=stamp))
            if accept:
                publish_status()
        for request in take(cancel_reader, CancelGoal_Request_):
            goal_id = bytes(request.goal_info.goal_id.uuid)
            stamp = request.goal_info.stamp
            if any(goal_id):
                selected = [goals[goal_id]] if goal_id in goals else None
            else:
                limit = (stamp.sec, stamp.nanosec)
                selected = [g for g in goals.values()
                            if limit == (0, 0) or (g.stamp.sec, g.stamp.nanosec) <= limit]
            if selected is None:
                code, canceling = ERROR_UNKNOWN_GOAL_ID, []
            else:
                active = [g for g in selected if g.status in (ACCEPTED, EXECUTING)]
                if selected and not active and all(g.status >= SUCCEEDED for g in selected) and any(goal_id):
                    code, canceling = ERROR_GOAL_TERMINATED, []
                else:
                    for g in active:
                        g.status = CANCELING
                    code = ERROR_NONE if active else ERROR_REJECTED
                    canceling = [g.info() for g in active]
            cancel_writer.write(CancelGoal_Response_(
                client_id=request.client_id, seq=request.seq, return_code=code, goals_canceling=canceling))
            if canceling:
                publish_status()
        for request in take(result_reader, GetResult_Request_):
            goal = goals.get(bytes(request.goal_id.uuid))
            if goal is None:
                result_writer.write(GetResult_Response_(
                    client_id=request.client_id, seq=request.seq, status=0, sequence=[]))
            elif goal.status >= SUCCEEDED:
                result_writer.write(GetResult_Response_(
                    client_id=request.client_id, seq=request.seq, status=goal.status, sequence=goal.sequence))
            else:
                goal.waiting.append((request.client_id, request.seq))
        # One step of every goal per turn.
        for goal in goals.values():
            if goal.status >= SUCCEEDED:
                continue
            if goal.order in (UNTIL_CANCELED, HOLD):
                if not goal.fed_back:
                    goal.fed_back = True
                    feedback(goal)
                if goal.order == UNTIL_CANCELED and goal.status == CANCELING:
                    end(goal, CANCELED)
            elif goal.step < goal.order:
                goal.sequence.append(goal.sequence[goal.step] + goal.sequence[goal.step - 1])
                goal.step += 1
                feedback(goal)
            else:
                end(goal, SUCCEEDED)
        time.sleep(0.002)


class ServiceClient:
    """One service's request writer and reply reader, with rmw_cyclonedds's client id."""

    def __init__(self, participant, name, request, response):
        self.response = response
        self.client_id = int.from_bytes(os.urandom(8), "little")
        guid = os.urandom(16)
        user_data = ("clientid=%2x" % guid[0] + "".join(".%x" % b for b in guid[1:]) + ";").encode()
        rq, rr = service_topics(participant, name, request, response)
        self.writer = DataWriter(participant, rq, qos=qos(user_data=user_data))
        self.reader = DataReader(participant, rr, qos=qos(user_data=user_data))
        self.request = request
        self.seq = 0
        self.replies = {}
        self.foreign = 0

    def matched(self):
        return self.writer.get_matched_subscriptions() and self.reader.get_matched_publications()

    def send(self, **fields):
        self.seq += 1
        self.writer.write(self.request(client_id=self.client_id, seq=self.seq, **fields))
        return self.seq

    def poll(self):
        for reply in take(self.reader, self.response):
            if reply.client_id != self.client_id:
                self.foreign += 1
            else:
                self.replies[reply.seq] = reply


def client(participant, seconds):
    end_at = time.monotonic() + seconds
    send_goal = ServiceClient(participant, "send_goal", SendGoal_Request_, SendGoal_Response_)
    cancel_goal = ServiceClient(participant, "cancel_goal", CancelGoal_Request_, CancelGoal_Response_)
    get_result = ServiceClient(participant, "get_result", GetResult_Request_, GetResult_Response_)
    services = (send_goal, cancel_goal, get_result)
    feedback_reader = DataReader(
        participant, Topic(participant, "rt/fibonacci/_action/feedback", FeedbackMessage_), qos=qos())
    status_reader = DataReader(
        participant, Topic(participant, "rt/fibonacci/_action/status", GoalStatusArray_), qos=qos(**STATUS_QOS))
    feedback = {}

    def pump():
        if time.monotonic() > end_at:
            print("TIMEOUT", flush=True)
            sys.exit(1)
        for s in services:
            s.poll()
        for message in take(feedback_reader, FeedbackMessage_):
            feedback.setdefault(bytes(message.goal_id.uuid), []).append(list(message.sequence))
        take(status_reader, GoalStatusArray_)
        time.sleep(0.002)

    def call(service, **fields):
        seq = service.send(**fields)
        while seq not in service.replies:
            pump()
        return service.replies.pop(seq)

    while not (all(s.matched() for s in services)
               and feedback_reader.get_matched_publications() and status_reader.get_matched_publications()):
        pump()
    print("MATCHED", flush=True)

    def send(order):
        goal_id = os.urandom(16)
        reply = call(send_goal, goal_id=UUID_(uuid=list(goal_id)), order=order)
        return goal_id, reply

    def result(goal_id):
        return call(get_result, goal_id=UUID_(uuid=list(goal_id)))

    # A goal to completion, every feedback.
    goal_id, reply = send(10)
    assert reply.accepted
    done = result(goal_id)
    expected = [fibonacci(k) for k in range(2, 11)]
    while len(feedback.get(goal_id, [])) < len(expected):
        pump()
    got = feedback[goal_id]
    print("FEEDBACK_COUNT", len(got), "OK" if got == expected else f"WRONG {got}", flush=True)
    print("RESULT", done.status, list(done.sequence), flush=True)
    # A rejected goal.
    _, reply = send(-1)
    if not reply.accepted:
        print("REJECTED", flush=True)
    # A goal canceled once it executes.
    goal_id, reply = send(UNTIL_CANCELED)
    assert reply.accepted
    while not feedback.get(goal_id):
        pump()
    info = GoalInfo_(goal_id=UUID_(uuid=list(goal_id)), stamp=Time_(sec=0, nanosec=0))
    answer = call(cancel_goal, goal_info=info)
    ids = [bytes(g.goal_id.uuid) for g in answer.goals_canceling]
    print("CANCEL", answer.return_code, len(ids), "SAME" if ids == [goal_id] else "OTHER", flush=True)
    done = result(goal_id)
    print("CANCELED_RESULT", done.status, list(done.sequence), flush=True)
    again = call(cancel_goal, goal_info=info)
    print("CANCEL_AGAIN", again.return_code, flush=True)
    print("FOREIGN", sum(s.foreign for s in services), flush=True)
    print("DONE", flush=True)


def main():
    mode, seconds = sys.argv[1], float(sys.argv[2])
    participant = DomainParticipant(
        int(os.environ.get("ROS_DOMAIN_ID", "0")), qos=Qos(Policy.Userdata(data=b"enclave=/;")))
    if mode == "serve":
        serve(participant, seconds)
    else:
        client(participant, seconds)


if __name__ == "__main__":
    main()
