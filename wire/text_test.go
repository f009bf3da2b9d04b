package wire

import "testing"

func TestAppendBody(t *testing.T) {
	list := []Member{{ID: 1, Priority: 100}, {ID: 2, Priority: 100}, {ID: 30, Priority: 7}}
	for _, tc := range []struct {
		m          Message
		node, want string
	}{
		{Message{Type: TypeRingElection, Origin: 1, List: list}, "", " origin=1 list=[1 2 30]"},
		{Message{Type: TypeRingCoordinator, Origin: 2, List: list[:1]}, "n", " origin=n2 list=[1]"},
		{Message{Type: TypeRingElection, Origin: 3}, "", " origin=3 list=[]"},
		{Message{Type: TypeCRElection, CandID: 2}, "", " cand=2"},
		{Message{Type: TypeCRElected, CandID: 4}, "n", " cand=n4"},
		{Message{Type: TypeHSProbe, CandID: 3, Phase: 0, Hops: 1, Dir: DirRight}, "", " cand=3 phase=0 hops=1 right"},
		{Message{Type: TypeHSReply, CandID: 5, Phase: 2, Hops: 4, Dir: DirLeft}, "n", " cand=n5 phase=2 hops=4 left"},
		{Message{Type: TypeHeartbeatAck, AckSeq: 7}, "", " ack=7"},
		{Message{Type: TypeHeartbeat, Claim: 3}, "", ""},
		{Message{Type: TypeElection}, "n", ""},
	} {
		if got := string(tc.m.AppendBody([]byte("x"), tc.node)); got != "x"+tc.want {
			t.Errorf("%v body (node %q) = %q, want %q", tc.m.Type, tc.node, got, "x"+tc.want)
		}
	}
}
