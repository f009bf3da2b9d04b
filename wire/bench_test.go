package wire

import "testing"

func benchmarkEncode(b *testing.B, m Message) {
	buf := make([]byte, 0, 64)
	b.SetBytes(int64(m.Size()))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		buf, err = m.Append(buf[:0])
		if err != nil {
			b.Fatal(err)
		}
	}
}

func benchmarkDecode(b *testing.B, m Message) {
	pkt, err := m.Append(nil)
	if err != nil {
		b.Fatal(err)
	}
	var d Message
	b.SetBytes(int64(len(pkt)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Decode(pkt, &d); err != nil {
			b.Fatal(err)
		}
	}
}

func heartbeatMsg() Message {
	m := goldenHeader(TypeHeartbeat)
	m.Claim = 1000
	return m
}

func BenchmarkEncodeHeartbeat(b *testing.B) { benchmarkEncode(b, heartbeatMsg()) }
func BenchmarkDecodeHeartbeat(b *testing.B) { benchmarkDecode(b, heartbeatMsg()) }
func BenchmarkEncodeElection(b *testing.B)  { benchmarkEncode(b, goldenHeader(TypeElection)) }
func BenchmarkDecodeElection(b *testing.B)  { benchmarkDecode(b, goldenHeader(TypeElection)) }
