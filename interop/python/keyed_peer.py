"""rclpy (real ROS 2) peer for the keyed-topic interop tests (test_msgs' IDL types with @key).

  keyed_peer.py pub TOPIC SECONDS   publishes, every 100 ms, KeyedLong {key: n % 3, value: n}
                                    on TOPIC and ComplexNestedKey {uint32_key: 7, nested_keys:
                                    {nested_data: {key: "nk", value: "nv"}, some_int: n},
                                    float64_value: 1.5} on TOPIC_complex
  keyed_peer.py strings TOPIC SECONDS
                                    publishes KeyedString with the keys of KEYED_STRING_KEYS in
                                    turn (value "v"), every 100 ms
  keyed_peer.py sub TOPIC SECONDS [TYPE]
                                    prints every message of TYPE (KeyedLong, the default, or
                                    KeyedString) received on TOPIC as `got key=K value=V`
  keyed_peer.py latched TOPIC SECONDS
                                    a transient-local KEEP_LAST(1) KeyedLong publisher: writes
                                    keys 0-4 in three rounds (value 10 x round + key) before
                                    anyone subscribed, prints PUBLISHED, and stays SECONDS
  keyed_peer.py late TOPIC SECONDS  a transient-local KEEP_LAST(10) KeyedLong subscription,
                                    printing `got key=K value=V` for each message
  keyed_peer.py sniff SECONDS       prints the PID_KEY_HASH of every RTPS DATA seen on `lo` (of
                                    the network namespace it runs in) as
                                    `keyhash <writer guid> <sequence number> <key hash>`, once
                                    per sample; needs CAP_NET_RAW (the tests run as root in a
                                    namespace of their own)
"""
import socket
import struct
import sys
import time

KEYED_STRING_KEYS = ["ab", "0123456789abcdefXYZ", "ab", "k"]


def publish(topic, seconds):
    import rclpy
    from test_msgs.msg import ComplexNestedKey, KeyedLong

    rclpy.init()
    node = rclpy.create_node("py_keyed_talker")
    longs = node.create_publisher(KeyedLong, topic, 10)
    complex_ = node.create_publisher(ComplexNestedKey, topic + "_complex", 10)
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1
        longs.publish(KeyedLong(key=n % 3, value=n))
        m = ComplexNestedKey(uint32_key=7, float64_value=1.5)
        m.nested_keys.nested_data.key = "nk"
        m.nested_keys.nested_data.value = "nv"
        m.nested_keys.some_int = n
        complex_.publish(m)
        rclpy.spin_once(node, timeout_sec=0.1)


def publish_strings(topic, seconds):
    import rclpy
    from test_msgs.msg import KeyedString

    rclpy.init()
    node = rclpy.create_node("py_keyed_strings")
    strings = node.create_publisher(KeyedString, topic, 10)
    # Only once a subscription matched, so that every key is on the wire.
    end = time.monotonic() + seconds
    while strings.get_subscription_count() == 0 and time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.05)
    for key in KEYED_STRING_KEYS:
        strings.publish(KeyedString(key=key, value="v"))
        rclpy.spin_once(node, timeout_sec=0.1)
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.1)


def subscribe(topic, seconds, type_name):
    import rclpy
    import test_msgs.msg

    rclpy.init()
    node = rclpy.create_node("py_keyed_listener")
    node.create_subscription(
        getattr(test_msgs.msg, type_name),
        topic,
        lambda m: print(f"got key={m.key} value={m.value}", flush=True),
        10,
    )
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.1)


def transient_local(depth):
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

    return QoSProfile(
        depth=depth,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
        reliability=ReliabilityPolicy.RELIABLE,
    )


def latched(topic, seconds):
    import rclpy
    from test_msgs.msg import KeyedLong

    rclpy.init()
    node = rclpy.create_node("py_keyed_latched")
    publisher = node.create_publisher(KeyedLong, topic, transient_local(1))
    for round_ in range(3):
        for key in range(5):
            publisher.publish(KeyedLong(key=key, value=10 * round_ + key))
    print("PUBLISHED", flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.1)


def late(topic, seconds):
    import rclpy
    from test_msgs.msg import KeyedLong

    rclpy.init()
    node = rclpy.create_node("py_keyed_late")
    node.create_subscription(
        KeyedLong,
        topic,
        lambda m: print(f"got key={m.key} value={m.value}", flush=True),
        transient_local(10),
    )
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.1)


def key_hashes(rtps):
    """(writer guid, sequence number, key hash) of each DATA with PID_KEY_HASH in a message."""
    if len(rtps) < 20 or rtps[:4] != b"RTPS":
        return
    prefix = rtps[8:20].hex()
    at = 20
    while at + 4 <= len(rtps):
        sub_id, flags = rtps[at], rtps[at + 1]
        order = "<" if flags & 1 else ">"
        (length,) = struct.unpack_from(order + "H", rtps, at + 2)
        body = rtps[at + 4 : at + 4 + length] if length else rtps[at + 4 :]
        if sub_id == 0x15 and flags & 0x02 and len(body) >= 20:
            (to_qos,) = struct.unpack_from(order + "H", body, 2)
            writer = body[8:12].hex()
            high, low = struct.unpack_from(order + "iI", body, 12)
            q = 4 + to_qos
            while q + 4 <= len(body):
                pid, plen = struct.unpack_from(order + "HH", body, q)
                if pid == 0x0001:
                    break
                if pid == 0x0070 and plen >= 16:
                    yield f"{prefix}:{writer}", (high << 32) + low, body[q + 4 : q + 20].hex()
                q += 4 + plen
        if length == 0:
            break
        at += 4 + length


def sniff(seconds):
    raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    raw.bind(("lo", 0))
    raw.settimeout(0.2)
    seen = set()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            frame = raw.recv(70000)
        except socket.timeout:
            continue
        # Ethernet (14 bytes, all zero on lo), IPv4, UDP.
        if len(frame) < 14 + 20 + 8 or frame[12:14] != b"\x08\x00" or frame[23] != 17:
            continue
        ip_len = (frame[14] & 0x0F) * 4
        for guid, sn, key_hash in key_hashes(frame[14 + ip_len + 8 :]):
            if (guid, sn) not in seen:
                seen.add((guid, sn))
                print(f"keyhash {guid} {sn} {key_hash}", flush=True)


mode = sys.argv[1]
if mode == "pub":
    publish(sys.argv[2], float(sys.argv[3]))
elif mode == "strings":
    publish_strings(sys.argv[2], float(sys.argv[3]))
elif mode == "sub":
    subscribe(sys.argv[2], float(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else "KeyedLong")
elif mode == "latched":
    latched(sys.argv[2], float(sys.argv[3]))
elif mode == "late":
    late(sys.argv[2], float(sys.argv[3]))
elif mode == "sniff":
    sniff(float(sys.argv[2]))
else:
    sys.exit(f"unknown mode {mode!r}: expected pub, strings, sub, latched, late or sniff")
