package vip

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// nlAddr is a's netlink form. IPv6 addresses carry IFA_F_NODAD: usable
// (and announceable) at once instead of tentative for a second of
// duplicate address detection, as keepalived adds them.
func nlAddr(a Addr) *netlink.Addr {
	ip := a.Prefix.Addr()
	na := &netlink.Addr{IPNet: &net.IPNet{
		IP:   ip.AsSlice(),
		Mask: net.CIDRMask(a.Prefix.Bits(), ip.BitLen()),
	}}
	if ip.Is6() {
		na.Flags = unix.IFA_F_NODAD
	}
	return na
}

func nlFamily(a Addr) int {
	if a.Prefix.Addr().Is4() {
		return netlink.FAMILY_V4
	}
	return netlink.FAMILY_V6
}

// add adds a to its interface; an address already there is no error.
func add(a Addr) error {
	l, err := netlink.LinkByName(a.Dev)
	if err != nil {
		return fmt.Errorf("vip: add %s: %w", a, err)
	}
	err = netlink.AddrAdd(l, nlAddr(a))
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("vip: add %s: %w", a, err)
	}
	return nil
}

// del removes a's address from its interface, whatever prefix length it
// has there, and reports whether it was there. An address (or interface)
// already gone is no error.
func del(a Addr) (bool, error) {
	l, err := netlink.LinkByName(a.Dev)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return false, nil
		}
		return false, fmt.Errorf("vip: remove %s: %w", a, err)
	}
	list, err := netlink.AddrList(l, nlFamily(a))
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return false, fmt.Errorf("vip: remove %s: %w", a, err)
	}
	ip := net.IP(a.Prefix.Addr().AsSlice())
	removed := false
	for _, have := range list {
		if have.IPNet == nil || !have.IP.Equal(ip) {
			continue
		}
		err := netlink.AddrDel(l, &netlink.Addr{IPNet: &net.IPNet{IP: ip, Mask: have.Mask}})
		switch {
		case err == nil:
			removed = true
		case errors.Is(err, unix.EADDRNOTAVAIL), errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENODEV):
		default:
			return removed, fmt.Errorf("vip: remove %s: %w", a, err)
		}
	}
	return removed, nil
}

// present reports whether a's address is on its interface.
func present(a Addr) (bool, error) {
	l, err := netlink.LinkByName(a.Dev)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return false, nil
		}
		return false, err
	}
	list, err := netlink.AddrList(l, nlFamily(a))
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return false, err
	}
	ip := net.IP(a.Prefix.Addr().AsSlice())
	for _, have := range list {
		if have.IPNet != nil && have.IP.Equal(ip) {
			return true, nil
		}
	}
	return false, nil
}

// Remove removes addrs from their interfaces by netlink, without a
// Manager: for the job's guard at the end of a lease or at the agent's
// death, and for addresses left behind by an agent that was killed. An
// address is removed whatever its prefix length on the interface. It
// reports which it removed (those that were there); an address or an
// interface already gone is no error. It returns the first error, after
// trying every address. It runs in the calling thread's network
// namespace.
func Remove(addrs []Addr) (removed []Addr, err error) {
	for _, a := range addrs {
		was, derr := del(a)
		if was {
			removed = append(removed, a)
		}
		if derr != nil && err == nil {
			err = derr
		}
	}
	return removed, err
}
