package explore

import (
	"fmt"
	"reflect"
	"sync"
	"unsafe"
)

// The election machines keep their state in unexported fields, and the
// election package has no Clone (nor should it for the agent's sake):
// the explorer copies and hashes them by what reflection says of their
// types. Walking a value with reflect at every copy cost most of a
// search (a reflect.Value per field, and opening each unexported one),
// so each type is compiled once into a plan, which then works on raw
// memory: runs of fields that hold no pointers are copied as bytes and
// hashed as bytes (padding left out), and only pointers, slices, maps,
// strings and interfaces are handled one by one, with typed stores so
// that the garbage collector sees every pointer written.
//
// Pointers are followed and shared structure is kept when two pointers
// point to the start of one object (a machine's core points back to the
// machine itself); a pointer into the middle of an object copied
// elsewhere would become a second copy, which TestCloneStepsAsOriginal
// would show. A func or chan field that is not nil cannot be copied and
// panics, so that a machine that grows one is noticed at once. Values of
// package unique's handles (netip's zones) are canonical and immutable:
// they are shared, never copied. Scratch fields (scratchFields) are left
// empty in a copy and out of the hash.

// scratchFields are the machines' scratch buffers, emptied at each use
// (election's core.acts, quorum.ids): their contents past a step do not
// matter.
var scratchFields = map[string]bool{"acts": true, "scratch": true, "ids": true}

// plan copies and hashes values of one type.
type plan struct {
	t    reflect.Type
	size uintptr
	// flat: no pointer anywhere in the value: a byte copy is a deep
	// copy.
	flat bool
	// ranges are the bytes that hold data (not padding), as offsets, for
	// the hash of a flat value.
	ranges []span
	// ops: a struct that is not flat, for its copy, field by field.
	ops []op
	// hops: a struct that is not flat, for its hash: its data bytes and
	// the fields that are not flat.
	hops []op
	// elem, key: the plans of a pointer's, slice's, array's or map's
	// element and of a map's key.
	elem, key *plan
	// shared: a pointer to something immutable and canonical (a handle
	// of package unique): copied and hashed as an address.
	shared bool
}

type span struct{ off, n uintptr }

// op is one part of a struct that is not flat: bytes to move (a run of
// flat fields), a value to copy by its plan, or a scratch field to skip.
type op struct {
	off, n  uintptr
	p       *plan // nil: bytes
	scratch bool
}

// plans holds the compiled plans; planMu serialises compiling, which
// may recurse through a type's own plan before it is done.
var (
	plans   sync.Map // reflect.Type → *plan
	planMu  sync.Mutex
	pending map[reflect.Type]*plan // being compiled, under planMu
)

// planOf returns the plan of t, compiling it the first time.
func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	planMu.Lock()
	defer planMu.Unlock()
	return compiling(t)
}

// compiling returns t's plan, under planMu: a plan being compiled (a
// recursive type) or a new one.
func compiling(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	if p, ok := pending[t]; ok {
		return p
	}
	outer := pending == nil
	if outer {
		pending = make(map[reflect.Type]*plan)
	}
	p := &plan{t: t, size: t.Size()}
	pending[t] = p
	p.compile()
	if outer {
		for t, q := range pending {
			plans.Store(t, q)
		}
		pending = nil
	}
	return p
}

func (p *plan) compile() {
	t := p.t
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		p.flat, p.ranges = true, []span{{0, p.size}}
	case reflect.Array:
		p.elem = compiling(t.Elem())
		if p.elem.flat {
			p.flat = true
			if len(p.elem.ranges) == 1 && p.elem.ranges[0] == (span{0, p.elem.size}) {
				p.ranges = []span{{0, p.size}}
			} else {
				for i := range uintptr(t.Len()) {
					for _, r := range p.elem.ranges {
						p.ranges = appendSpan(p.ranges, span{i*p.elem.size + r.off, r.n})
					}
				}
			}
		}
	case reflect.Struct:
		if t.PkgPath() == "unique" {
			// unique.Handle: one pointer to a canonical value.
			if t.Size() != unsafe.Sizeof(unsafe.Pointer(nil)) || t.NumField() != 1 || t.Field(0).Type.Kind() != reflect.Pointer {
				panic(fmt.Sprintf("explore: cannot copy a %v", t))
			}
			p.shared = true
			return
		}
		p.flat = true
		for i := range t.NumField() {
			f := t.Field(i)
			fp := compiling(f.Type)
			switch {
			case scratchFields[f.Name] && f.Type.Kind() == reflect.Slice:
				p.flat = false
				p.ops = append(p.ops, op{off: f.Offset, n: fp.size, scratch: true})
			case fp.flat:
				for _, r := range fp.ranges {
					p.ranges = appendSpan(p.ranges, span{f.Offset + r.off, r.n})
					if n := len(p.hops); n > 0 && p.hops[n-1].p == nil && p.hops[n-1].off+p.hops[n-1].n == f.Offset+r.off {
						p.hops[n-1].n += r.n
					} else {
						p.hops = append(p.hops, op{off: f.Offset + r.off, n: r.n})
					}
				}
				if n := len(p.ops); n > 0 && p.ops[n-1].p == nil && !p.ops[n-1].scratch && p.ops[n-1].off+p.ops[n-1].n == f.Offset {
					p.ops[n-1].n += fp.size
				} else {
					p.ops = append(p.ops, op{off: f.Offset, n: fp.size})
				}
			default:
				p.flat = false
				p.ops = append(p.ops, op{off: f.Offset, n: fp.size, p: fp})
				p.hops = append(p.hops, op{off: f.Offset, n: fp.size, p: fp})
			}
		}
		if p.flat {
			p.ops, p.hops = nil, nil
		}
	case reflect.Pointer:
		p.elem = compiling(t.Elem())
	case reflect.Slice:
		p.elem = compiling(t.Elem())
	case reflect.Map:
		p.key, p.elem = compiling(t.Key()), compiling(t.Elem())
	case reflect.String, reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
	default:
		panic(fmt.Sprintf("explore: cannot copy a %v", t))
	}
}

// appendSpan appends r to rs, merged with the last span when they touch.
func appendSpan(rs []span, r span) []span {
	if n := len(rs); n > 0 && rs[n-1].off+rs[n-1].n == r.off {
		rs[n-1].n += r.n
		return rs
	}
	return append(rs, r)
}

func add(p unsafe.Pointer, off uintptr) unsafe.Pointer { return unsafe.Add(p, off) }

func moveBytes(dst, src unsafe.Pointer, n uintptr) {
	if n > 0 {
		copy(unsafe.Slice((*byte)(dst), n), unsafe.Slice((*byte)(src), n))
	}
}

// sliceHeader is a slice's representation; its pointer field makes a
// store of it a typed store.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// copier copies one value; it remembers the objects it has copied, by
// address and type, to keep shared structure.
type copier struct {
	seen []copied
}

type copied struct {
	src unsafe.Pointer
	t   reflect.Type
	dst unsafe.Pointer
}

// deepCopy returns a copy of v that shares no mutable memory with it.
func deepCopy[T any](v T) T {
	var c copier
	return copyWith(&c, v)
}

// copyWith is deepCopy with a copier whose memory is reused.
func copyWith[T any](c *copier, v T) T {
	c.seen = c.seen[:0]
	var out T
	p := planOf(reflect.TypeFor[T]())
	c.copy(p, unsafe.Pointer(&out), unsafe.Pointer(&v))
	clear(c.seen)
	return out
}

// copy copies the value at src into dst, which holds the zero value of
// p's type.
func (c *copier) copy(p *plan, dst, src unsafe.Pointer) {
	if p.flat {
		moveBytes(dst, src, p.size)
		return
	}
	if p.shared {
		*(*unsafe.Pointer)(dst) = *(*unsafe.Pointer)(src)
		return
	}
	switch p.t.Kind() {
	case reflect.Struct:
		for _, o := range p.ops {
			switch {
			case o.scratch:
			case o.p == nil:
				moveBytes(add(dst, o.off), add(src, o.off), o.n)
			default:
				c.copy(o.p, add(dst, o.off), add(src, o.off))
			}
		}
	case reflect.Array:
		for i := range uintptr(p.t.Len()) {
			c.copy(p.elem, add(dst, i*p.elem.size), add(src, i*p.elem.size))
		}
	case reflect.Pointer:
		if sp := *(*unsafe.Pointer)(src); sp != nil {
			*(*unsafe.Pointer)(dst) = c.object(p.elem, sp)
		}
	case reflect.String:
		*(*string)(dst) = *(*string)(src)
	case reflect.Slice:
		sh := (*sliceHeader)(src)
		if sh.data == nil {
			return
		}
		data := reflect.MakeSlice(p.t, sh.len, sh.cap).UnsafePointer()
		if p.elem.flat {
			moveBytes(data, sh.data, uintptr(sh.len)*p.elem.size)
		} else {
			for i := range uintptr(sh.len) {
				c.copy(p.elem, add(data, i*p.elem.size), add(sh.data, i*p.elem.size))
			}
		}
		*(*sliceHeader)(dst) = sliceHeader{data, sh.len, sh.cap}
	case reflect.Map:
		c.copyMap(p, dst, src)
	case reflect.Interface:
		c.copyIface(p, dst, src)
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if *(*unsafe.Pointer)(src) != nil {
			panic(fmt.Sprintf("explore: cannot copy a %v", p.t))
		}
	}
}

// object returns the copy of the object of plan p at sp, copying it the
// first time it is met.
func (c *copier) object(p *plan, sp unsafe.Pointer) unsafe.Pointer {
	for _, s := range c.seen {
		if s.src == sp && s.t == p.t {
			return s.dst
		}
	}
	dp := reflect.New(p.t).UnsafePointer()
	c.seen = append(c.seen, copied{sp, p.t, dp})
	c.copy(p, dp, sp)
	return dp
}

func (c *copier) copyMap(p *plan, dst, src unsafe.Pointer) {
	if *(*unsafe.Pointer)(src) == nil {
		return
	}
	sm := reflect.NewAt(p.t, src).Elem()
	nm := reflect.MakeMapWithSize(p.t, sm.Len())
	k, v := reflect.New(p.t.Key()).Elem(), reflect.New(p.t.Elem()).Elem()
	for it := sm.MapRange(); it.Next(); {
		k.SetIterKey(it)
		v.SetIterValue(it)
		nk, nv := k, v
		if !p.key.flat {
			nk = reflect.New(p.t.Key()).Elem()
			c.copy(p.key, nk.Addr().UnsafePointer(), k.Addr().UnsafePointer())
		}
		if !p.elem.flat {
			nv = reflect.New(p.t.Elem()).Elem()
			c.copy(p.elem, nv.Addr().UnsafePointer(), v.Addr().UnsafePointer())
		}
		nm.SetMapIndex(nk, nv)
	}
	*(*unsafe.Pointer)(dst) = nm.UnsafePointer()
}

// An interface value is two words: its dynamic type (a type or an itab,
// which names one concrete type) and its data, which is the value itself
// for a pointer and a pointer to an immutable box otherwise (what the
// runtime and reflect rely on). dynamic finds the concrete type's plan
// from the first word, once per type.
type dynamic struct {
	p   *plan
	ptr bool // a pointer: the data word is the value
}

var dynamics sync.Map // the type word → *dynamic

func dynamicOf(t reflect.Type, iface unsafe.Pointer) *dynamic {
	w := (*[2]unsafe.Pointer)(iface)[0]
	if d, ok := dynamics.Load(w); ok {
		return d.(*dynamic)
	}
	et := reflect.NewAt(t, iface).Elem().Elem().Type()
	d := &dynamic{p: planOf(et), ptr: et.Kind() == reflect.Pointer}
	dynamics.Store(w, d)
	return d
}

func (c *copier) copyIface(p *plan, dst, src unsafe.Pointer) {
	sw, dw := (*[2]unsafe.Pointer)(src), (*[2]unsafe.Pointer)(dst)
	if sw[0] == nil {
		return
	}
	d := dynamicOf(p.t, src)
	switch {
	case d.ptr:
		dw[0] = sw[0]
		if sw[1] != nil {
			dw[1] = c.object(d.p.elem, sw[1])
		}
	case d.p.flat || d.p.shared:
		// An immutable box of a value that holds no mutable memory.
		dw[0], dw[1] = sw[0], sw[1]
	default:
		box := reflect.New(d.p.t).UnsafePointer()
		c.copy(d.p, box, sw[1])
		dw[0], dw[1] = sw[0], box
	}
}
