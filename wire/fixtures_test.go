package wire

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// fileNames names every valid type; it is used for golden file names and
// annotations, and TestFileNamesCoverEnum keeps it in step with the enum.
var fileNames = map[Type]string{
	TypeElection:        "election",
	TypeAnswer:          "answer",
	TypeCoordinator:     "coordinator",
	TypeHeartbeat:       "heartbeat",
	TypeHeartbeatAck:    "heartbeat_ack",
	TypeResign:          "resign",
	TypeDiscover:        "discover",
	TypeRingElection:    "ring_election",
	TypeRingCoordinator: "ring_coordinator",
	TypeRingAck:         "ring_ack",
	TypeCRElection:      "cr_election",
	TypeCRElected:       "cr_elected",
	TypeHSProbe:         "hs_probe",
	TypeHSReply:         "hs_reply",
	TypeProbe:           "probe",
	TypeVouch:           "vouch",
	TypeNotice:          "notice",
}

// allTypes returns every valid type, in protocol order.
func allTypes() []Type {
	var ts []Type
	for t := TypeInvalid + 1; t < typeEnd; t++ {
		ts = append(ts, t)
	}
	return ts
}

// goldenHeader returns the header shared by the golden messages. The values
// are distinct so that a field written at the wrong offset shows.
func goldenHeader(t Type) Message {
	return Message{
		Type:        t,
		Flags:       0,
		Priority:    100,        // 00 64
		Cluster:     0x5cc3f828, // ClusterID("office")
		From:        0x1122334455667788,
		Term:        7,
		Incarnation: 0x65a1b2c3,
		Seq:         42, // 00 00 00 2a
	}
}

// golden is one golden packet: a message and the file holding its bytes.
type golden struct {
	file string // base name under testdata/golden
	msg  Message
}

// goldens returns the golden packets: at least one per type.
func goldens() []golden {
	var gs []golden
	add := func(suffix string, m Message) {
		name := fmt.Sprintf("%02d_%s%s.hex", m.Type, fileNames[m.Type], suffix)
		gs = append(gs, golden{name, m})
	}
	for _, t := range allTypes() {
		m := goldenHeader(t)
		switch t {
		case TypeCoordinator:
			m.Claim = 1
		case TypeHeartbeat:
			m.Claim = 1000
		case TypeProbe:
			m.Leader, m.Age = 0x99, 300123 // asks about 0x99, last heard 300.123ms ago
		case TypeVouch:
			m.Leader, m.Age = 0x99, 41000 // heard 0x99 41ms ago
		case TypeHeartbeatAck, TypeRingAck:
			m.AckSeq = 41
		case TypeDiscover:
			m.Addr = netip.MustParseAddrPort("192.168.1.20:7946")
			add("_ipv4", m)
			m.Addr = netip.MustParseAddrPort("[2001:db8::1:20]:7946")
			add("_ipv6", m)
			continue
		case TypeRingElection:
			m.Origin = 3
			m.List = []Member{{ID: 3, Priority: 50}, {ID: 0x1122334455667788, Priority: 100}}
		case TypeRingCoordinator:
			m.Origin = 3
			m.List = []Member{{ID: 3, Priority: 50}, {ID: 0x1122334455667788, Priority: 100}, {ID: 9, Priority: 0xffff}}
		case TypeCRElection, TypeCRElected:
			m.CandID = 0x99
			m.CandPrio = 250
		case TypeHSProbe:
			m.CandID, m.CandPrio, m.Phase, m.Hops, m.Dir = 0x99, 250, 2, 3, DirRight
		case TypeHSReply:
			m.CandID, m.CandPrio, m.Phase, m.Hops, m.Dir = 0x99, 250, 2, 0, DirLeft
		}
		add("", m)
	}
	return gs
}

// equalMessage reports whether a and b are equal, treating a nil List and
// an empty one as equal (Decode keeps the caller's List capacity).
func equalMessage(a, b *Message) bool {
	x, y := *a, *b
	x.List, y.List = nil, nil
	return reflect.DeepEqual(x, y) && slices.Equal(a.List, b.List)
}

// mustAppend encodes m into a new slice, failing the test on error.
func mustAppend(tb testing.TB, m *Message) []byte {
	tb.Helper()
	b, err := m.Append(nil)
	if err != nil {
		tb.Fatalf("Append(%+v): %v", m, err)
	}
	return b
}

// field is one field of the annotated layout used in golden files.
type field struct {
	n     int    // size in bytes
	name  string // field name, as in the layout table in message.go
	value string // decoded value, for the reader
}

// layout describes the encoding of m field by field. It is written from
// the layout table and the Type comments in message.go, independently of
// Append; TestGolden checks that it covers the encoding exactly.
func layout(m *Message) []field {
	fs := []field{
		{2, "magic", `"LL"`},
		{1, "version", fmt.Sprint(Version)},
		{1, "type", fmt.Sprintf("%d (%s)", m.Type, fileNames[m.Type])},
		{1, "flags", fmt.Sprintf("%#02x", m.Flags)},
		{1, "reserved", "0"},
		{2, "priority", fmt.Sprint(m.Priority)},
		{4, "cluster id", fmt.Sprintf("%#08x", m.Cluster)},
		{8, "node id", fmt.Sprintf("%#016x", m.From)},
		{8, "term", fmt.Sprint(m.Term)},
		{4, "incarnation", fmt.Sprintf("%#08x", m.Incarnation)},
		{4, "sequence", fmt.Sprint(m.Seq)},
	}
	switch m.Type {
	case TypeCoordinator, TypeHeartbeat:
		fs = append(fs, field{4, "claim", fmt.Sprint(m.Claim)})
	case TypeHeartbeatAck:
		fs = append(fs, field{4, "acked claim", fmt.Sprint(m.AckSeq)})
	case TypeRingAck:
		fs = append(fs, field{4, "acked hop", fmt.Sprint(m.AckSeq)})
	case TypeProbe, TypeVouch:
		fs = append(fs, field{8, "leader", fmt.Sprintf("%#x", m.Leader)}, field{4, "age_us", fmt.Sprint(m.Age)})
	case TypeDiscover:
		a := m.Addr.Addr().Unmap()
		n := 16
		if a.Is4() {
			n = 4
		}
		fs = append(fs,
			field{1, "addr len", fmt.Sprint(n)},
			field{n, "addr", a.String()},
			field{2, "port", fmt.Sprint(m.Addr.Port())})
	case TypeRingElection, TypeRingCoordinator:
		fs = append(fs,
			field{8, "origin", fmt.Sprint(m.Origin)},
			field{2, "count", fmt.Sprint(len(m.List))})
		for i, mem := range m.List {
			fs = append(fs,
				field{8, fmt.Sprintf("member[%d] id", i), fmt.Sprintf("%#x", mem.ID)},
				field{2, fmt.Sprintf("member[%d] priority", i), fmt.Sprint(mem.Priority)})
		}
	case TypeCRElection, TypeCRElected:
		fs = append(fs,
			field{8, "candidate id", fmt.Sprintf("%#x", m.CandID)},
			field{2, "candidate priority", fmt.Sprint(m.CandPrio)})
	case TypeHSProbe, TypeHSReply:
		fs = append(fs,
			field{8, "candidate id", fmt.Sprintf("%#x", m.CandID)},
			field{2, "candidate priority", fmt.Sprint(m.CandPrio)},
			field{1, "phase", fmt.Sprint(m.Phase)},
			field{2, "hops", fmt.Sprint(m.Hops)},
			field{1, "dir", fmt.Sprint(m.Dir)})
	}
	return fs
}

// annotate renders b, the encoding of m, as a golden file: one line per
// field, hex bytes then a comment naming the field and its value.
func annotate(m *Message, b []byte) (string, error) {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# %s message, %d bytes, big-endian; layout in wire/message.go.\n", fileNames[m.Type], len(b))
	fmt.Fprintf(&sb, "# Rewritten by `go test ./wire -update`: check any change by hand.\n")
	off := 0
	for _, f := range layout(m) {
		if off+f.n > len(b) {
			return "", fmt.Errorf("layout overruns the %d-byte encoding at field %q", len(b), f.name)
		}
		var hx []string
		for _, c := range b[off : off+f.n] {
			hx = append(hx, fmt.Sprintf("%02x", c))
		}
		fmt.Fprintf(&sb, "%-48s # %s = %s\n", strings.Join(hx, " "), f.name, f.value)
		off += f.n
	}
	if off != len(b) {
		return "", fmt.Errorf("layout covers %d bytes, encoding has %d", off, len(b))
	}
	return sb.String(), nil
}

// parseHex decodes a golden file: hex digits and whitespace, with '#'
// starting a comment that runs to the end of the line.
func parseHex(text []byte) ([]byte, error) {
	var digits bytes.Buffer
	for line := range bytes.Lines(text) {
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for _, c := range line {
			switch c {
			case ' ', '\t', '\r', '\n':
			default:
				digits.WriteByte(c)
			}
		}
	}
	return hex.DecodeString(digits.String())
}

// readGolden returns the bytes of the named golden file.
func readGolden(tb testing.TB, name string) []byte {
	tb.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", "golden", name))
	if err != nil {
		tb.Fatal(err)
	}
	b, err := parseHex(text)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return b
}
