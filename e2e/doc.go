// Package e2e tests real lanleader agents on real hosts: each host is a
// Linux network namespace, joined by a veth pair to one Linux bridge, with
// addresses from 198.18.0.0/15 and multicast groups from 239.255.0.0/16
// only.
//
// The tests need root (to create namespaces) and the ip command of
// iproute2; without them they skip, saying why. ./test.sh installs
// iproute2 when it runs as root and ip is missing. Run them with
//
//	sudo go test -count=1 -v ./e2e
//
// The test bed (netns.go) addresses only 198.18.0.0/24 (hosts 198.18.0.1,
// 198.18.0.2, …) and multicast groups of 239.255.0.0/16; the bridge has no
// uplink and no address, and IPv6 is off on every interface it creates, so
// nothing leaves it. Every object it creates is named with the prefix
// "llt-": namespaces llt-<host>-<suffix>, the bridge llt-br<suffix>, the
// bridge's ends of the veth pairs llt-<host>-<suffix> (the other end is
// eth0 in the namespace), where the suffix is the test process's pid and a
// letter; the lanleader build is in <tmp>/llt-bin-<pid>-<random>.
// Everything is removed by t.Cleanup (the build by Main), also when a test
// fails, and a new run first removes what a killed run left (objects whose
// pid is no longer a running test binary), killing the processes left in
// those namespaces by pid.
//
// The lanleader binary under test is built once per test run from
// ./cmd/lanleader. A test package that uses the test bed must call Main
// from its TestMain: it removes that build and runs the helper modes of
// the test binary (Net.Get, Net.SendUDP), which run inside a namespace.
package e2e
