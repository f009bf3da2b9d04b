//go:build linux

// Command vipecho is the service behind the virtual address in the e2e
// VIP tests and the benchmark's -vip rows: started on every host, it
// answers whoever asks with the host's name, so that a client that asks
// the virtual address learns which host holds it.
//
//	vipecho -name NAME [-port 7007]
//
// UDP: every datagram to PORT, on any address of the host (it binds
// 0.0.0.0, so it answers on the virtual address wherever it is), is
// answered with the datagram's first 16 bytes (the client's sequence
// number and send time), then NAME; the answer leaves from the address the
// datagram was sent to (IP_PKTINFO), so a client that asked the virtual
// address hears the virtual address. TCP: every connection to PORT gets
// NAME and a newline, then is closed. It runs until SIGTERM or SIGINT
// (exit 0).
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/net/ipv4"
)

// echoed is how many bytes of a request an answer repeats.
const echoed = 16

func main() {
	name := flag.String("name", "", "the host's name, the answer")
	port := flag.Int("port", 7007, "the UDP and TCP port")
	flag.Parse()
	if *name == "" || flag.NArg() > 0 || *port < 1 || *port > 65535 {
		fail(errors.New("usage: vipecho -name NAME [-port PORT]"))
	}
	uc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4zero, Port: *port})
	if err != nil {
		fail(err)
	}
	pc := ipv4.NewPacketConn(uc)
	if err := pc.SetControlMessage(ipv4.FlagDst|ipv4.FlagInterface, true); err != nil {
		fail(err)
	}
	ln, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4zero, Port: *port})
	if err != nil {
		fail(err)
	}
	go serveUDP(pc, []byte(*name))
	go serveTCP(ln, *name)
	fmt.Printf("vipecho: %s on port %d (UDP and TCP)\n", *name, *port)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	<-sigs
	os.Exit(0)
}

func serveUDP(pc *ipv4.PacketConn, name []byte) {
	buf := make([]byte, 1500)
	out := make([]byte, 0, echoed+len(name))
	failed := 0
	for {
		n, cm, from, err := pc.ReadFrom(buf)
		if err != nil {
			fail(err)
		}
		if n < echoed {
			continue
		}
		out = append(append(out[:0], buf[:echoed]...), name...)
		var reply *ipv4.ControlMessage
		if cm != nil && cm.Dst != nil && !cm.Dst.IsMulticast() {
			reply = &ipv4.ControlMessage{Src: cm.Dst}
		}
		if _, err := pc.WriteTo(out, reply, from); err != nil {
			// The address may have just gone (the host lost the VIP):
			// the client counts what it did not hear. The first failure
			// of a run and every thousandth are told.
			if failed++; failed%1000 == 1 {
				fmt.Fprintf(os.Stderr, "vipecho: answer to %v: %v (%d failed)\n", from, err, failed)
			}
			continue
		}
		if failed > 0 {
			fmt.Fprintf(os.Stderr, "vipecho: answering again, after %d failed\n", failed)
			failed = 0
		}
	}
}

func serveTCP(ln *net.TCPListener, name string) {
	for {
		c, err := ln.AcceptTCP()
		if err != nil {
			fail(err)
		}
		c.SetWriteDeadline(time.Now().Add(time.Second))
		fmt.Fprintf(c, "%s\n", name)
		c.Close()
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "vipecho: %v\n", err)
	os.Exit(2)
}
