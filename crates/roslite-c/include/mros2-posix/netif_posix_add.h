// mROS 2-POSIX registers its network interface with this call. roslite needs no interface
// registered (see netif.h): it accepts the call and returns 0, success.
#ifndef ROSLITE_NETIF_POSIX_ADD_H
#define ROSLITE_NETIF_POSIX_ADD_H

inline int netif_posix_add(const char *, const char *) { return 0; }

#endif  // ROSLITE_NETIF_POSIX_ADD_H
