// Package vip holds the cluster's virtual addresses on the leader: it adds
// them to their interfaces by netlink, announces them (gratuitous ARP for
// IPv4, unsolicited neighbour advertisement for IPv6) at once, repeated and
// refreshed, removes them, probes whether another host holds one (RFC
// 5227), and watches the carrier of their interfaces. It decides nothing:
// the agent says when to take and when to drop the addresses.
//
// It must not: choose when to hold the addresses, touch any address of an
// interface other than the ones it was given, or send anything but the
// announcements and probes of those addresses. Linux only (netlink,
// AF_PACKET); it needs CAP_NET_ADMIN and CAP_NET_RAW.
package vip
