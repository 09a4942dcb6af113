// Fast DDS 2.9 ping-pong peer (Debian bookworm `libfastrtps-dev`; no ROS) for
// `roslite bench rtt`: the same exchange as the roslite pair, for comparison in the same run.
//
// Topics `rt/roslite_bench/rtt/ping` and `rt/roslite_bench/rtt/pong`, type
// `std_msgs::msg::dds_::UInt8MultiArray_` with an empty layout (plain CDR: layout.dim length 0,
// data_offset 0, then the `uint8[]` data), reliable, volatile, KEEP_LAST 1, as the roslite pair.
// The TopicDataType is written by hand, so building needs only the compiler and the libraries:
// `c++ -std=c++17 -O2 fastdds_pingpong.cpp -lfastrtps -lfastcdr`.
//
// Network: loopback only. One UDPv4 transport whose interface whitelist is 127.0.0.1, no
// built-in transports (so no shared memory), data sharing off, explicit unicast locators on
// 127.0.0.1 (participant id 0 for pong, 1 for ping) so no multicast locator is created or
// announced, and the other side's metatraffic port as the only initial peer.
//
//     fastdds_pingpong pong <domain> <max size>
//         echoes every ping until killed; prints `READY` once its endpoints exist.
//     fastdds_pingpong ping <domain> <hz or 0> <count> <warmup> <size>[,<size>...]
//         waits for the pong (prints `MATCHED`), then per size sends warmup + count pings,
//         each after the previous echo arrived (0 Hz: back to back) or on a fixed period, and
//         prints `SIZE <bytes>`, one `RTT <microseconds>` per counted round trip (publish to
//         the echo's `on_data_available`), `LOST <n>` and `RSS <VmRSS kB>`; then `DONE`.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/DataWriterListener.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/DataReaderListener.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>
#include <fastdds/rtps/transport/UDPv4TransportDescriptor.h>
#include <fastrtps/utils/IPLocator.h>

using namespace eprosima::fastdds::dds;
using eprosima::fastcdr::Cdr;
using eprosima::fastcdr::FastBuffer;
using eprosima::fastdds::rtps::UDPv4TransportDescriptor;
using eprosima::fastrtps::rtps::InstanceHandle_t;
using eprosima::fastrtps::rtps::IPLocator;
using eprosima::fastrtps::rtps::Locator_t;
using eprosima::fastrtps::rtps::SerializedPayload_t;
using Clock = std::chrono::steady_clock;

struct Bytes {
    std::vector<uint8_t> data;
};

// std_msgs/UInt8MultiArray with an empty layout: encapsulation (4), dim length (4),
// data_offset (4), data length (4), data.
class BytesType : public TopicDataType {
public:
    explicit BytesType(uint32_t max_size) {
        setName("std_msgs::msg::dds_::UInt8MultiArray_");
        m_typeSize = 16 + max_size + 4;
        m_isGetKeyDefined = false;
    }

    bool serialize(void* data, SerializedPayload_t* payload) override {
        auto* msg = static_cast<Bytes*>(data);
        FastBuffer buffer(reinterpret_cast<char*>(payload->data), payload->max_size);
        Cdr ser(buffer, Cdr::DEFAULT_ENDIAN, Cdr::DDS_CDR);
        payload->encapsulation = ser.endianness() == Cdr::BIG_ENDIANNESS ? CDR_BE : CDR_LE;
        try {
            ser.serialize_encapsulation();
            ser << static_cast<uint32_t>(0) << static_cast<uint32_t>(0);
            ser << static_cast<uint32_t>(msg->data.size());
            if (!msg->data.empty()) {
                ser.serializeArray(msg->data.data(), msg->data.size());
            }
        } catch (...) {
            return false;
        }
        payload->length = static_cast<uint32_t>(ser.getSerializedDataLength());
        return true;
    }

    bool deserialize(SerializedPayload_t* payload, void* data) override {
        auto* msg = static_cast<Bytes*>(data);
        FastBuffer buffer(reinterpret_cast<char*>(payload->data), payload->length);
        Cdr deser(buffer, Cdr::DEFAULT_ENDIAN, Cdr::DDS_CDR);
        try {
            deser.read_encapsulation();
            uint32_t dims = 0, offset = 0, len = 0;
            deser >> dims;
            if (dims != 0) {
                return false;
            }
            deser >> offset >> len;
            if (len > payload->length) {
                return false;
            }
            msg->data.resize(len);
            if (len > 0) {
                deser.deserializeArray(msg->data.data(), len);
            }
        } catch (...) {
            return false;
        }
        return true;
    }

    std::function<uint32_t()> getSerializedSizeProvider(void* data) override {
        return [data]() {
            return static_cast<uint32_t>(16 + static_cast<Bytes*>(data)->data.size() + 4);
        };
    }

    void* createData() override { return new Bytes(); }

    void deleteData(void* data) override { delete static_cast<Bytes*>(data); }

    bool getKey(void*, InstanceHandle_t*, bool) override { return false; }
};

// RTPS well-known ports (DDSI-RTPS 2.5 section 9.6.1.1): PB 7400, DG 250, PG 2, d1 10, d3 11.
static uint32_t metatraffic_port(uint32_t domain, uint32_t participant) {
    return 7400 + 250 * domain + 10 + 2 * participant;
}

static uint32_t user_port(uint32_t domain, uint32_t participant) {
    return 7400 + 250 * domain + 11 + 2 * participant;
}

static Locator_t loopback(uint32_t port) {
    Locator_t locator;
    IPLocator::setIPv4(locator, 127, 0, 0, 1);
    locator.port = port;
    return locator;
}

static DomainParticipant* make_participant(uint32_t domain, uint32_t me, uint32_t other) {
    DomainParticipantQos qos;
    qos.name(me == 0 ? "roslite_bench_fastdds_pong" : "roslite_bench_fastdds_ping");
    auto udp = std::make_shared<UDPv4TransportDescriptor>();
    udp->interfaceWhiteList.push_back("127.0.0.1");
    udp->sendBufferSize = 4 << 20;
    udp->receiveBufferSize = 4 << 20;
    qos.transport().user_transports.push_back(udp);
    qos.transport().use_builtin_transports = false;
    auto& wire = qos.wire_protocol();
    wire.participant_id = static_cast<int32_t>(me);
    wire.builtin.metatrafficUnicastLocatorList.push_back(loopback(metatraffic_port(domain, me)));
    wire.default_unicast_locator_list.push_back(loopback(user_port(domain, me)));
    wire.builtin.initialPeersList.push_back(loopback(metatraffic_port(domain, other)));
    wire.builtin.avoid_builtin_multicast = true;
    return DomainParticipantFactory::get_instance()->create_participant(domain, qos);
}

static DataWriterQos writer_qos(Publisher* publisher) {
    DataWriterQos qos = publisher->get_default_datawriter_qos();
    qos.reliability().kind = RELIABLE_RELIABILITY_QOS;
    qos.durability().kind = VOLATILE_DURABILITY_QOS;
    qos.history().kind = KEEP_LAST_HISTORY_QOS;
    qos.history().depth = 1;
    qos.data_sharing().off();
    qos.endpoint().history_memory_policy =
        eprosima::fastrtps::rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
    return qos;
}

static DataReaderQos reader_qos(Subscriber* subscriber) {
    DataReaderQos qos = subscriber->get_default_datareader_qos();
    qos.reliability().kind = RELIABLE_RELIABILITY_QOS;
    qos.durability().kind = VOLATILE_DURABILITY_QOS;
    qos.history().kind = KEEP_LAST_HISTORY_QOS;
    qos.history().depth = 1;
    qos.data_sharing().off();
    qos.endpoint().history_memory_policy =
        eprosima::fastrtps::rtps::PREALLOCATED_WITH_REALLOC_MEMORY_MODE;
    return qos;
}

static uint64_t seq_of(const Bytes& msg) {
    uint64_t seq = UINT64_MAX;
    if (msg.data.size() >= 8) {
        std::memcpy(&seq, msg.data.data(), 8);
    }
    return seq;
}

struct Pair {
    DomainParticipant* participant = nullptr;
    Publisher* publisher = nullptr;
    Subscriber* subscriber = nullptr;
    DataWriter* writer = nullptr;
    DataReader* reader = nullptr;
};

static Pair make_pair(uint32_t domain, uint32_t me, uint32_t max_size, const char* out_topic,
                      const char* in_topic, DataReaderListener* listener) {
    Pair p;
    p.participant = make_participant(domain, me, me == 0 ? 1 : 0);
    if (p.participant == nullptr) {
        std::fprintf(stderr, "cannot create the participant\n");
        std::exit(2);
    }
    TypeSupport type(new BytesType(max_size));
    type.register_type(p.participant);
    Topic* out = p.participant->create_topic(out_topic, type.get_type_name(), TOPIC_QOS_DEFAULT);
    Topic* in = p.participant->create_topic(in_topic, type.get_type_name(), TOPIC_QOS_DEFAULT);
    p.publisher = p.participant->create_publisher(PUBLISHER_QOS_DEFAULT);
    p.subscriber = p.participant->create_subscriber(SUBSCRIBER_QOS_DEFAULT);
    p.writer = p.publisher->create_datawriter(out, writer_qos(p.publisher));
    p.reader = p.subscriber->create_datareader(in, reader_qos(p.subscriber), listener);
    if (out == nullptr || in == nullptr || p.writer == nullptr || p.reader == nullptr) {
        std::fprintf(stderr, "cannot create the endpoints\n");
        std::exit(2);
    }
    return p;
}

class Echo : public DataReaderListener {
public:
    DataWriter* writer = nullptr;

    void on_data_available(DataReader* reader) override {
        SampleInfo info;
        while (reader->take_next_sample(&msg_, &info) == ReturnCode_t::RETCODE_OK) {
            if (info.valid_data && writer != nullptr) {
                writer->write(&msg_);
            }
        }
    }

private:
    Bytes msg_;
};

class Waiter : public DataReaderListener {
public:
    void on_data_available(DataReader* reader) override {
        SampleInfo info;
        while (reader->take_next_sample(&msg_, &info) == ReturnCode_t::RETCODE_OK) {
            if (!info.valid_data) {
                continue;
            }
            auto at = Clock::now();
            std::lock_guard<std::mutex> lock(mutex_);
            last_seq_ = seq_of(msg_);
            last_len_ = msg_.data.size();
            last_at_ = at;
            ready_.notify_all();
        }
    }

    // Waits for the echo of `seq`; returns false on timeout.
    bool wait(uint64_t seq, Clock::duration timeout, Clock::time_point* at, size_t* len) {
        std::unique_lock<std::mutex> lock(mutex_);
        bool ok = ready_.wait_for(lock, timeout, [&] { return last_seq_ == seq; });
        if (ok) {
            *at = last_at_;
            *len = last_len_;
        }
        return ok;
    }

private:
    Bytes msg_;
    std::mutex mutex_;
    std::condition_variable ready_;
    uint64_t last_seq_ = UINT64_MAX;
    size_t last_len_ = 0;
    Clock::time_point last_at_;
};

static long rss_kb() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("VmRSS:", 0) == 0) {
            return std::strtol(line.c_str() + 6, nullptr, 10);
        }
    }
    return 0;
}

static std::vector<uint32_t> parse_sizes(const char* text) {
    std::vector<uint32_t> sizes;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        sizes.push_back(static_cast<uint32_t>(std::strtoul(item.c_str(), nullptr, 10)));
    }
    return sizes;
}

static const char* PING = "rt/roslite_bench/rtt/ping";
static const char* PONG = "rt/roslite_bench/rtt/pong";

static int pong(uint32_t domain, uint32_t max_size) {
    Echo echo;
    Pair p = make_pair(domain, 0, max_size, PONG, PING, &echo);
    echo.writer = p.writer;
    std::printf("READY\n");
    std::fflush(stdout);
    for (;;) {
        std::this_thread::sleep_for(std::chrono::seconds(3600));
    }
}

static int ping(uint32_t domain, double hz, size_t count, size_t warmup,
                const std::vector<uint32_t>& sizes) {
    uint32_t max_size = 8;
    for (auto s : sizes) {
        max_size = s > max_size ? s : max_size;
    }
    Waiter waiter;
    Pair p = make_pair(domain, 1, max_size, PING, PONG, &waiter);
    // Probe until an echo comes back: both topics matched both ways.
    Bytes msg;
    msg.data.assign(64, 0xa5);
    uint64_t seq = 0;
    auto give_up = Clock::now() + std::chrono::seconds(30);
    for (;;) {
        ++seq;
        std::memcpy(msg.data.data(), &seq, 8);
        p.writer->write(&msg);
        Clock::time_point at;
        size_t len = 0;
        if (waiter.wait(seq, std::chrono::milliseconds(200), &at, &len)) {
            break;
        }
        if (Clock::now() > give_up) {
            std::printf("NOMATCH\n");
            return 1;
        }
    }
    std::printf("MATCHED\n");
    std::fflush(stdout);
    auto period = hz > 0 ? std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(1.0 / hz))
                         : Clock::duration::zero();
    for (auto size : sizes) {
        msg.data.assign(size < 8 ? 8 : size, 0xa5);
        std::printf("SIZE %u\n", size);
        // Flushed now: the bench counts the pong's pages during the warm-up pings.
        std::fflush(stdout);
        size_t lost = 0;
        auto next = Clock::now();
        for (size_t i = 0; i < warmup + count; ++i) {
            if (hz > 0) {
                std::this_thread::sleep_until(next);
                next += period;
            }
            ++seq;
            std::memcpy(msg.data.data(), &seq, 8);
            auto start = Clock::now();
            p.writer->write(&msg);
            Clock::time_point at;
            size_t len = 0;
            if (!waiter.wait(seq, std::chrono::seconds(5), &at, &len) || len != msg.data.size()) {
                ++lost;
                continue;
            }
            if (i >= warmup) {
                double us = std::chrono::duration<double, std::micro>(at - start).count();
                std::printf("RTT %.3f\n", us);
            }
        }
        std::printf("LOST %zu\nRSS %ld\n", lost, rss_kb());
        std::fflush(stdout);
    }
    std::printf("DONE\n");
    std::fflush(stdout);
    return 0;
}

int main(int argc, char** argv) {
    if (argc >= 4 && std::strcmp(argv[1], "pong") == 0) {
        return pong(std::strtoul(argv[2], nullptr, 10), std::strtoul(argv[3], nullptr, 10));
    }
    if (argc >= 7 && std::strcmp(argv[1], "ping") == 0) {
        return ping(std::strtoul(argv[2], nullptr, 10), std::strtod(argv[3], nullptr),
                    std::strtoul(argv[4], nullptr, 10), std::strtoul(argv[5], nullptr, 10),
                    parse_sizes(argv[6]));
    }
    std::fprintf(stderr,
                 "usage: fastdds_pingpong pong <domain> <max size>\n"
                 "       fastdds_pingpong ping <domain> <hz or 0> <count> <warmup> <sizes>\n");
    return 2;
}
