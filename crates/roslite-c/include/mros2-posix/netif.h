// mROS 2-POSIX's network interface settings. On a POSIX host roslite uses the host's sockets
// and ROS 2's own discovery settings (ROS_DOMAIN_ID, ROS_AUTOMATIC_DISCOVERY_RANGE,
// ROS_STATIC_PEERS), so these name the loopback interface and configure nothing.
#ifndef ROSLITE_NETIF_H
#define ROSLITE_NETIF_H

#ifndef NETIF_IPADDR
#define NETIF_IPADDR "127.0.0.1"
#endif
#ifndef NETIF_NETMASK
#define NETIF_NETMASK "255.0.0.0"
#endif

#endif  // ROSLITE_NETIF_H
