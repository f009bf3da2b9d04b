package sim

import "github.com/lanleader/lanleader/wire"

func typeName(t wire.Type) string { return t.String() }
