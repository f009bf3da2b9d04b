package config

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

// derived are the settings whose default follows something else, and
// what the table says of it: a test cannot read them off DefaultConfig.
var derived = map[string]string{
	"name":            "host name",
	"node-id":         "from `/etc/machine-id`",
	"suspect-after":   "150ms (1.5 heartbeats, 3 with `--quorum`)",
	"multicast-group": "`239.255.76.76` (`ff02::4c4c` on IPv6)",
	"lease":           "4 heartbeats, or `--suspect-after` + `--heartbeat` if longer",
	"lease-margin":    "lease/10",
	"check-timeout":   "the interval",
	"log-format":      "`text`", // the command line's, not Config's
	"log-level":       "`info`",
}

// TestSettingDefaults: every default the table states is DefaultConfig's
// value, and the derived ones say what they follow.
func TestSettingDefaults(t *testing.T) {
	def := &Run{Config: DefaultConfig()}
	for i := range Settings {
		s := &Settings[i]
		if want, ok := derived[s.Flag]; ok {
			if s.Default != want {
				t.Errorf("%s: default %q, want %q", s.Flag, s.Default, want)
			}
			continue
		}
		if got := defaultText(s.Ptr(def)); !sameDefault(s.Default, got) {
			t.Errorf("%s: the table says %q, DefaultConfig has %q", s.Flag, s.Default, got)
		}
	}
	// The derived defaults are what DefaultConfig derives.
	c := DefaultConfig()
	if c.SuspectAfter != 3*c.Heartbeat/2 || c.SuspectAfter != 150*time.Millisecond {
		t.Errorf("suspect-after %v, heartbeat %v", c.SuspectAfter, c.Heartbeat)
	}
	c.Quorum = 3
	c.DeriveTimeouts()
	if c.Lease != 4*c.Heartbeat || c.LeaseMargin != c.Lease/10 {
		t.Errorf("lease %v, margin %v", c.Lease, c.LeaseMargin)
	}
}

// defaultText is a field's value as the table writes a default.
func defaultText(p any) string {
	switch p := p.(type) {
	case *[]string:
		return strings.Join(*p, ",")
	case *[]byte:
		return string(*p)
	case *[][]byte:
		return fmt.Sprint(len(*p))
	case *[]Check:
		return fmt.Sprint(len(*p))
	case *[]VIP:
		return fmt.Sprint(len(*p))
	case *netip.Addr:
		if !p.IsValid() {
			return ""
		}
		return p.String()
	}
	return fmt.Sprint(deref(p))
}

// sameDefault: the table's text and the field's value name one default
// ("none" is an empty value; a duration may be written 1m for 1m0s).
func sameDefault(table, value string) bool {
	table = strings.Trim(table, "`")
	switch {
	case table == "none":
		return value == "" || value == "0"
	case table == value:
		return true
	}
	td, err1 := time.ParseDuration(table)
	vd, err2 := time.ParseDuration(value)
	if err1 == nil && err2 == nil {
		return td == vd
	}
	return false
}

// TestSettingTable: every flag and key once; a range exactly for the
// integers; names for the named ones; the pointer's type fits the kind.
func TestSettingTable(t *testing.T) {
	var flags, keys []string
	r := &Run{}
	for i := range Settings {
		s := &Settings[i]
		if slices.Contains(flags, s.Flag) || slices.Contains(keys, s.Key) {
			t.Errorf("%s (%s) given twice", s.Flag, s.Key)
		}
		flags, keys = append(flags, s.Flag), append(keys, s.Key)
		if (s.Kind == KindInteger) != (s.Range != nil) {
			t.Errorf("%s: kind %d, range %v", s.Flag, s.Kind, s.Range)
		}
		if (s.Kind == KindName) != (len(s.Names) > 0) {
			t.Errorf("%s: kind %d, names %q", s.Flag, s.Kind, s.Names)
		}
		if s.Help == "" || s.Default == "" {
			t.Errorf("%s: no help or no default", s.Flag)
		}
		p := s.Ptr(r)
		var ok bool
		switch s.Kind {
		case KindInteger:
			switch p.(type) {
			case *int, *uint16, *uint64:
				ok = true
			}
		case KindDuration, KindDurationOrOff, KindAnyDuration:
			_, ok = p.(*time.Duration)
		case KindBoolean:
			_, ok = p.(*bool)
		case KindAddrList, KindFileList, KindArgv:
			_, ok = p.(*[]string)
		case KindCheckList:
			_, ok = p.(*[]Check)
		case KindVIPAddr:
			_, ok = p.(*[]VIP)
		case KindMulticastIP:
			_, ok = p.(*netip.Addr)
		case KindKeyFile:
			switch p.(type) {
			case *[]byte, *[][]byte:
				ok = true
			}
		default:
			_, ok = p.(*string)
		}
		if !ok {
			t.Errorf("%s: kind %d, field %T", s.Flag, s.Kind, p)
		}
	}
	if r, ok := IntRange("priority"); !ok || r != (Range{1, 65535}) {
		t.Errorf("priority's range %v %v", r, ok)
	}
}

// TestDiffers: a reload's comparison sees a change in each kind of field,
// and none between equal configurations.
func TestDiffers(t *testing.T) {
	a, b := DefaultConfig(), DefaultConfig()
	for i := range Settings {
		if s := &Settings[i]; s.Differs(&a, &b) {
			t.Errorf("%s differs between two DefaultConfigs", s.Flag)
		}
	}
	b.Join, b.Heartbeat, b.Group, b.Key = []string{"192.0.2.1"}, time.Second, netip.MustParseAddr("239.255.0.9"), []byte("k")
	b.Checks, b.Realtime, b.Priority = []Check{{Command: "true"}}, true, 7
	var got []string
	for i := range Settings {
		if s := &Settings[i]; s.Differs(&a, &b) {
			got = append(got, s.Flag)
		}
	}
	want := []string{"priority", "join", "heartbeat", "key-file", "multicast-group", "check", "realtime"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("differ %q, want %q", got, want)
	}
}
