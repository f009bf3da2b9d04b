// Package gossip is memberlist, adapted to the agent: its configuration
// (the LAN profile on the agent's gossip address, the cluster's label
// and key), its log turned into the agent's (LogWriter), and the joiner
// that keeps trying the seeds. It holds no agent: the agent's delegate
// receives memberlist's events, and the agent's loop decides what they
// mean.
package gossip

import (
	"fmt"
	"log"
	"net/netip"

	"github.com/hashicorp/memberlist"

	"github.com/lanleader/lanleader/agent/config"
	"github.com/lanleader/lanleader/agent/internal/auth"
)

// Delegate is what the agent gives memberlist: its metadata, and the
// membership events and name conflicts it queues for its loop.
type Delegate interface {
	memberlist.Delegate
	memberlist.EventDelegate
	memberlist.ConflictDelegate
}

// Config builds memberlist's configuration for the agent of cfg: the LAN profile,
// bound to the agent's gossip address, its log sent to the agent's logger
// at debug level. Its Label is the cluster name: memberlist drops packets
// and streams of another cluster (and, with a key, authenticates the
// label with the data). With keys its traffic is encrypted (AES-256-GCM)
// with the gossip key of the signing secret, the accepted secrets' keys
// decrypt too, and unencrypted traffic is refused both ways.
func Config(cfg *config.Config, bind netip.AddrPort, d Delegate, keys *auth.Keys) (*memberlist.Config, error) {
	mc := memberlist.DefaultLANConfig()
	mc.Name = cfg.Name
	mc.BindAddr = bind.Addr().String()
	mc.BindPort = int(bind.Port())
	// memberlist advertises AdvertisePort when AdvertiseAddr is set, and
	// the port it bound only when BindPort is 0.
	mc.AdvertisePort = int(bind.Port())
	if !bind.Addr().IsUnspecified() {
		mc.AdvertiseAddr = bind.Addr().String()
	}
	mc.Label = cfg.Cluster
	if keys != nil {
		kr, err := memberlist.NewKeyring(keys.Gossip, keys.Gossip[0])
		if err != nil {
			return nil, fmt.Errorf("memberlist keyring: %w", err)
		}
		mc.Keyring = kr
		mc.GossipVerifyIncoming = true
		mc.GossipVerifyOutgoing = true
	}
	mc.Delegate = d
	mc.Events = d
	mc.Conflict = d
	mc.LogOutput = nil
	mc.Logger = log.New(NewLogWriter(cfg.Logger.With("component", "memberlist")), "", 0)
	return mc, nil
}
