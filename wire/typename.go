package wire

import "strconv"

var typeNames = [...]string{
	TypeInvalid:         "INVALID",
	TypeElection:        "ELECTION",
	TypeAnswer:          "ANSWER",
	TypeCoordinator:     "COORDINATOR",
	TypeHeartbeat:       "HEARTBEAT",
	TypeHeartbeatAck:    "HEARTBEAT_ACK",
	TypeResign:          "RESIGN",
	TypeDiscover:        "DISCOVER",
	TypeRingElection:    "RING_ELECTION",
	TypeRingCoordinator: "RING_COORDINATOR",
	TypeRingAck:         "RING_ACK",
	TypeCRElection:      "CR_ELECTION",
	TypeCRElected:       "CR_ELECTED",
	TypeHSProbe:         "HS_PROBE",
	TypeHSReply:         "HS_REPLY",
	TypeProbe:           "PROBE",
	TypeVouch:           "VOUCH",
	TypeNotice:          "NOTICE",
}

// String returns the protocol name of t (ELECTION, HEARTBEAT_ACK, …), or
// TYPE(n) for a number outside the enum. The names are used as the "type"
// label of the message metrics.
func (t Type) String() string {
	if int(t) < len(typeNames) && typeNames[t] != "" {
		return typeNames[t]
	}
	return "TYPE(" + strconv.Itoa(int(t)) + ")"
}
