// std_msgs/msg/String at its ROS 2 include path, for the mROS 2-shaped test applications.
#pragma once
#include "../../../hand_written_types.hpp"
