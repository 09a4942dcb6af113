"""rclpy (real ROS 2) sensor_msgs/Image peer for the large-data interop tests, on /image with
the default QoS (reliable, volatile, KEEP_LAST 10).

Image bytes follow a pattern both sides recompute: byte i of frame `frame<seed>` is
(7 * i + seed) mod 256.

    image_peer.py talk <seconds> <width> <height>
        publishes rgb8 images `frame1`, `frame2`, ... at 5 Hz for `seconds`
        (320x240 rgb8 is 230 400 bytes: DATA_FRAG from Fast DDS).
    image_peer.py listen <seconds> <count>
        prints `IMAGE <frame_id> <len> <crc32>` per image received (zlib.crc32 of the data),
        then `RESULT <count>`; exits after `count` images or `seconds`.
"""
import array
import sys
import time
import zlib

import numpy as np
import rclpy
from sensor_msgs.msg import Image


def pattern(length, seed):
    i = np.arange(length, dtype=np.uint32)
    return ((i * 7 + seed) & 0xFF).astype(np.uint8).tobytes()


def talk(seconds, width, height):
    node = rclpy.create_node("py_image_talker")
    publisher = node.create_publisher(Image, "image", 10)
    end = time.monotonic() + seconds
    seed = 0
    while time.monotonic() < end:
        seed += 1
        msg = Image()
        msg.header.frame_id = f"frame{seed}"
        msg.width, msg.height = width, height
        msg.encoding = "rgb8"
        msg.step = width * 3
        msg.data = array.array("B", pattern(width * height * 3, seed))
        publisher.publish(msg)
        rclpy.spin_once(node, timeout_sec=0.2)


def listen(seconds, count):
    node = rclpy.create_node("py_image_listener")
    got = []

    def on_image(msg):
        data = msg.data
        got.append((msg.header.frame_id, len(data), zlib.crc32(bytes(data))))

    node.create_subscription(Image, "image", on_image, 10)
    end = time.monotonic() + seconds
    while time.monotonic() < end and len(got) < count:
        rclpy.spin_once(node, timeout_sec=0.1)
    for frame, length, crc in got:
        print("IMAGE", frame, length, crc, flush=True)
    print("RESULT", len(got), flush=True)


rclpy.init()
if sys.argv[1] == "talk":
    talk(float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
else:
    listen(float(sys.argv[2]), int(sys.argv[3]))
