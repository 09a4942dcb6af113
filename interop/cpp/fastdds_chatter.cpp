// Plain Fast DDS 2.9 peer (Debian bookworm `libfastrtps-dev`, the Fast DDS generation of ROS 2
// Humble; no ROS) that follows the ROS 2 wire conventions for /chatter: DDS topic `rt/chatter`,
// type `std_msgs::msg::dds_::String_` (one `string data`, plain CDR), reliable, volatile,
// KEEP_LAST 10, participant USER_DATA `enclave=/;`.
//
// The TopicDataType is written by hand (what fastddsgen would generate for std_msgs/String,
// with Fast CDR 1.0's DDS_CDR encapsulation), so building needs only the C++ compiler and the
// libraries: `c++ -std=c++17 fastdds_chatter.cpp -lfastrtps -lfastcdr`.
//
//     fastdds_chatter listen <seconds> <count>
//         prints `HEARD <data>` per sample as it arrives, then `MATCHED <n>` (writers matched
//         at the end) and `RESULT <count>`; exits after `count` samples or `seconds`.
//     fastdds_chatter talk <seconds>
//         publishes `from fastdds <n>` at 10 Hz for `seconds`.
//     fastdds_chatter graph <seconds> <node name>
//         reads `ros_discovery_info` (rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_,
//         reliable, transient local, as rmw_fastrtps reads it) in Humble's layout, where a Gid
//         is `char[24]`, strictly: a sample that does not parse, leaves unread bytes beyond
//         CDR padding, or has a Gid whose last 8 bytes are not zero prints `BAD <reason>`.
//         For each good sample it prints `PARTICIPANT <gid hex>`, then per node `NODE
//         <namespace> <name> <readers> <writers>` and `WRITER <gid hex>` per writer gid;
//         exits after a sample that lists `node name`, or `seconds`, printing `RESULT
//         found|timeout`.
//
// The domain is ROS_DOMAIN_ID (default 0); the network is Fast DDS's default (UDPv4 on every
// interface, SHM), so run it in a network namespace with only `lo`.
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fastcdr/Cdr.h>
#include <fastcdr/FastBuffer.h>
#include <fastdds/dds/domain/DomainParticipant.hpp>
#include <fastdds/dds/domain/DomainParticipantFactory.hpp>
#include <fastdds/dds/publisher/DataWriter.hpp>
#include <fastdds/dds/publisher/Publisher.hpp>
#include <fastdds/dds/subscriber/DataReader.hpp>
#include <fastdds/dds/subscriber/SampleInfo.hpp>
#include <fastdds/dds/subscriber/Subscriber.hpp>
#include <fastdds/dds/topic/TopicDataType.hpp>
#include <fastdds/dds/topic/TypeSupport.hpp>

using namespace eprosima::fastdds::dds;
using eprosima::fastcdr::Cdr;
using eprosima::fastcdr::FastBuffer;
using eprosima::fastrtps::rtps::InstanceHandle_t;
using eprosima::fastrtps::rtps::SerializedPayload_t;

struct StringMsg {
    std::string data;
};

class StringType : public TopicDataType {
public:
    StringType() {
        setName("std_msgs::msg::dds_::String_");
        // Encapsulation + length + a generous bound for the unbounded string.
        m_typeSize = 4 + 4 + 4096;
        m_isGetKeyDefined = false;
    }

    bool serialize(void* data, SerializedPayload_t* payload) override {
        auto* msg = static_cast<StringMsg*>(data);
        FastBuffer buffer(reinterpret_cast<char*>(payload->data), payload->max_size);
        Cdr ser(buffer, Cdr::DEFAULT_ENDIAN, Cdr::DDS_CDR);
        payload->encapsulation = ser.endianness() == Cdr::BIG_ENDIANNESS ? CDR_BE : CDR_LE;
        try {
            ser.serialize_encapsulation();
            ser << msg->data;
        } catch (...) {
            return false;
        }
        payload->length = static_cast<uint32_t>(ser.getSerializedDataLength());
        return true;
    }

    bool deserialize(SerializedPayload_t* payload, void* data) override {
        auto* msg = static_cast<StringMsg*>(data);
        FastBuffer buffer(reinterpret_cast<char*>(payload->data), payload->length);
        Cdr deser(buffer, Cdr::DEFAULT_ENDIAN, Cdr::DDS_CDR);
        try {
            deser.read_encapsulation();
            payload->encapsulation = deser.endianness() == Cdr::BIG_ENDIANNESS ? CDR_BE : CDR_LE;
            deser >> msg->data;
        } catch (...) {
            return false;
        }
        return true;
    }

    std::function<uint32_t()> getSerializedSizeProvider(void* data) override {
        return [data]() {
            auto size = static_cast<StringMsg*>(data)->data.size();
            return static_cast<uint32_t>(4 + 4 + size + 1 + 3);
        };
    }

    void* createData() override { return new StringMsg(); }

    void deleteData(void* data) override { delete static_cast<StringMsg*>(data); }

    bool getKey(void*, InstanceHandle_t*, bool) override { return false; }
};

// Humble's rmw_dds_common/msg/Gid.msg: `char[24] data`.
using Gid = std::array<unsigned char, 24>;

struct NodeInfo {
    std::string node_namespace;
    std::string node_name;
    std::vector<Gid> readers;
    std::vector<Gid> writers;
};

// ParticipantEntitiesInfo as Humble lays it out; `error` is set instead of throwing.
struct ParticipantInfo {
    Gid gid{};
    std::vector<NodeInfo> nodes;
    std::string error;
};

class HumbleParticipantInfoType : public TopicDataType {
public:
    HumbleParticipantInfoType() {
        setName("rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_");
        m_typeSize = 1 << 20;
        m_isGetKeyDefined = false;
    }

    bool serialize(void*, SerializedPayload_t*) override { return false; }

    bool deserialize(SerializedPayload_t* payload, void* data) override {
        auto* info = static_cast<ParticipantInfo*>(data);
        *info = ParticipantInfo{};
        FastBuffer buffer(reinterpret_cast<char*>(payload->data), payload->length);
        Cdr deser(buffer, Cdr::DEFAULT_ENDIAN, Cdr::DDS_CDR);
        try {
            deser.read_encapsulation();
            read_gid(deser, info->gid, info->error);
            uint32_t nodes = 0;
            deser >> nodes;
            if (nodes > 1000) {
                info->error = "node count " + std::to_string(nodes);
                nodes = 0;
            }
            for (uint32_t i = 0; i < nodes && info->error.empty(); i++) {
                NodeInfo node;
                deser >> node.node_namespace >> node.node_name;
                read_gids(deser, node.readers, info->error);
                read_gids(deser, node.writers, info->error);
                info->nodes.push_back(node);
            }
        } catch (const std::exception& e) {
            info->error = std::string("does not parse: ") + e.what();
        } catch (...) {
            info->error = "does not parse";
        }
        // Counted from the start of the payload, encapsulation header included.
        size_t used = deser.getSerializedDataLength();
        if (info->error.empty() && (used > payload->length || payload->length - used > 3)) {
            info->error = std::to_string(payload->length - used) + " unread bytes";
        }
        if (!info->error.empty()) {
            info->error += "; payload " + std::to_string(payload->length) + " bytes:";
            char byte[4];
            for (uint32_t i = 0; i < payload->length && i < 64; i++) {
                std::snprintf(byte, sizeof byte, " %02x", payload->data[i]);
                info->error += byte;
            }
        }
        return true;
    }

    std::function<uint32_t()> getSerializedSizeProvider(void*) override {
        return []() { return 1u << 20; };
    }

    void* createData() override { return new ParticipantInfo(); }

    void deleteData(void* data) override { delete static_cast<ParticipantInfo*>(data); }

    bool getKey(void*, InstanceHandle_t*, bool) override { return false; }

private:
    static void read_gid(Cdr& deser, Gid& gid, std::string& error) {
        deser.deserializeArray(reinterpret_cast<char*>(gid.data()), gid.size());
        for (size_t i = 16; i < gid.size(); i++) {
            if (gid[i] != 0 && error.empty()) {
                error = "gid padding byte " + std::to_string(i) + " is not zero";
            }
        }
    }

    static void read_gids(Cdr& deser, std::vector<Gid>& gids, std::string& error) {
        uint32_t count = 0;
        deser >> count;
        if (count > 100000) {
            error = "gid count " + std::to_string(count);
            return;
        }
        gids.resize(count);
        for (auto& gid : gids) {
            read_gid(deser, gid, error);
        }
    }
};

static std::string hex(const Gid& gid) {
    std::string out;
    char byte[3];
    for (unsigned char b : gid) {
        std::snprintf(byte, sizeof byte, "%02x", b);
        out += byte;
    }
    return out;
}

// Mode `graph`: see the top of the file.
static int graph(DomainParticipant* participant, std::chrono::steady_clock::time_point end,
                 const std::string& wanted) {
    TypeSupport type(new HumbleParticipantInfoType());
    type.register_type(participant);
    Topic* topic =
        participant->create_topic("ros_discovery_info", type.get_type_name(), TOPIC_QOS_DEFAULT);
    Subscriber* subscriber = participant->create_subscriber(SUBSCRIBER_QOS_DEFAULT);
    DataReaderQos rqos = DATAREADER_QOS_DEFAULT;
    rqos.reliability().kind = RELIABLE_RELIABILITY_QOS;
    rqos.durability().kind = TRANSIENT_LOCAL_DURABILITY_QOS;
    rqos.history().kind = KEEP_ALL_HISTORY_QOS;
    DataReader* reader = subscriber->create_datareader(topic, rqos);
    if (reader == nullptr) {
        std::fprintf(stderr, "cannot create the ros_discovery_info reader\n");
        return 1;
    }
    bool found = false;
    while (!found && std::chrono::steady_clock::now() < end) {
        ParticipantInfo info;
        SampleInfo sample;
        while (!found && reader->take_next_sample(&info, &sample) == ReturnCode_t::RETCODE_OK) {
            if (!sample.valid_data) {
                continue;
            }
            if (!info.error.empty()) {
                std::printf("BAD %s\n", info.error.c_str());
                continue;
            }
            std::printf("PARTICIPANT %s\n", hex(info.gid).c_str());
            for (const auto& node : info.nodes) {
                std::printf("NODE %s %s %zu %zu\n", node.node_namespace.c_str(),
                            node.node_name.c_str(), node.readers.size(), node.writers.size());
                for (const auto& gid : node.writers) {
                    std::printf("WRITER %s\n", hex(gid).c_str());
                }
                found = found || node.node_name == wanted;
            }
            std::fflush(stdout);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::printf("RESULT %s\n", found ? "found" : "timeout");
    std::fflush(stdout);
    return 0;
}

int main(int argc, char** argv) {
    bool listen = argc >= 4 && std::strcmp(argv[1], "listen") == 0;
    bool talk = argc >= 3 && std::strcmp(argv[1], "talk") == 0;
    bool graph_mode = argc >= 4 && std::strcmp(argv[1], "graph") == 0;
    if (!listen && !talk && !graph_mode) {
        std::fprintf(stderr,
                     "usage: %s listen <seconds> <count> | talk <seconds> | graph <seconds> "
                     "<node name>\n",
                     argv[0]);
        return 2;
    }
    auto end = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(static_cast<long>(std::atof(argv[2]) * 1000));
    const char* domain_env = std::getenv("ROS_DOMAIN_ID");
    DomainId_t domain = domain_env ? std::atoi(domain_env) : 0;

    DomainParticipantQos pqos = PARTICIPANT_QOS_DEFAULT;
    pqos.name("fastdds_chatter");
    const char enclave[] = "enclave=/;";
    pqos.user_data().data_vec(std::vector<eprosima::fastrtps::rtps::octet>(
        enclave, enclave + sizeof enclave - 1));
    DomainParticipant* participant =
        DomainParticipantFactory::get_instance()->create_participant(domain, pqos);
    if (participant == nullptr) {
        std::fprintf(stderr, "cannot create the participant\n");
        return 1;
    }
    if (graph_mode) {
        int rc = graph(participant, end, argv[3]);
        participant->delete_contained_entities();
        DomainParticipantFactory::get_instance()->delete_participant(participant);
        return rc;
    }
    TypeSupport type(new StringType());
    type.register_type(participant);
    Topic* topic = participant->create_topic("rt/chatter", type.get_type_name(), TOPIC_QOS_DEFAULT);

    if (listen) {
        int count = std::atoi(argv[3]);
        Subscriber* subscriber = participant->create_subscriber(SUBSCRIBER_QOS_DEFAULT);
        DataReaderQos rqos = DATAREADER_QOS_DEFAULT;
        rqos.reliability().kind = RELIABLE_RELIABILITY_QOS;
        rqos.durability().kind = VOLATILE_DURABILITY_QOS;
        rqos.history().kind = KEEP_LAST_HISTORY_QOS;
        rqos.history().depth = 10;
        DataReader* reader = subscriber->create_datareader(topic, rqos);
        if (reader == nullptr) {
            std::fprintf(stderr, "cannot create the reader\n");
            return 1;
        }
        int got = 0;
        while (std::chrono::steady_clock::now() < end && got < count) {
            StringMsg msg;
            SampleInfo info;
            while (got < count && reader->take_next_sample(&msg, &info) == ReturnCode_t::RETCODE_OK) {
                if (info.valid_data) {
                    got++;
                    std::printf("HEARD %s\n", msg.data.c_str());
                    std::fflush(stdout);
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        SubscriptionMatchedStatus matched;
        reader->get_subscription_matched_status(matched);
        std::printf("MATCHED %d\nRESULT %d\n", matched.current_count, got);
        std::fflush(stdout);
    } else {
        Publisher* publisher = participant->create_publisher(PUBLISHER_QOS_DEFAULT);
        DataWriterQos wqos = DATAWRITER_QOS_DEFAULT;
        wqos.reliability().kind = RELIABLE_RELIABILITY_QOS;
        wqos.durability().kind = VOLATILE_DURABILITY_QOS;
        wqos.history().kind = KEEP_LAST_HISTORY_QOS;
        wqos.history().depth = 10;
        DataWriter* writer = publisher->create_datawriter(topic, wqos);
        if (writer == nullptr) {
            std::fprintf(stderr, "cannot create the writer\n");
            return 1;
        }
        for (int n = 1; std::chrono::steady_clock::now() < end; n++) {
            StringMsg msg{"from fastdds " + std::to_string(n)};
            writer->write(&msg);
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    participant->delete_contained_entities();
    DomainParticipantFactory::get_instance()->delete_participant(participant);
    return 0;
}
