package explore

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"reflect"
	"slices"
	"unsafe"
)

// Hashing a state by the same compiled plan as its copy, to cut repeats.

// hasher hashes values with hash/maphash (one seed for the process: a
// hash identifies a state within one search).
type hasher struct {
	m    maphash.Hash
	seen []unsafe.Pointer // the objects hashed, numbered by their order
}

var hashSeed = maphash.MakeSeed()

func (h *hasher) reset() {
	h.m.SetSeed(hashSeed)
	h.seen = h.seen[:0]
}

func (h *hasher) sum() uint64 { return h.m.Sum64() }

func (h *hasher) u64(v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	h.m.Write(b[:])
}

func (h *hasher) bytes(b []byte) { h.m.Write(b) }

func (h *hasher) str(s string) {
	h.u64(uint64(len(s)))
	h.m.WriteString(s)
}

// hashValue hashes *v.
func hashValue[T any](h *hasher, v *T) {
	h.hash(planOf(reflect.TypeFor[T]()), unsafe.Pointer(v))
}

// hash hashes the value of plan p at ptr, following pointers (each
// object once) and hashing a map's entries in an order of their own
// hashes.
func (h *hasher) hash(p *plan, ptr unsafe.Pointer) {
	if p.flat {
		for _, r := range p.ranges {
			h.bytes(unsafe.Slice((*byte)(add(ptr, r.off)), r.n))
		}
		return
	}
	if p.shared {
		h.u64(uint64(uintptr(*(*unsafe.Pointer)(ptr))))
		return
	}
	switch p.t.Kind() {
	case reflect.Struct:
		for _, o := range p.hops {
			if o.p == nil {
				h.bytes(unsafe.Slice((*byte)(add(ptr, o.off)), o.n))
			} else {
				h.hash(o.p, add(ptr, o.off))
			}
		}
	case reflect.Array:
		for i := range uintptr(p.t.Len()) {
			h.hash(p.elem, add(ptr, i*p.elem.size))
		}
	case reflect.Pointer:
		h.object(p.elem, *(*unsafe.Pointer)(ptr))
	case reflect.String:
		h.str(*(*string)(ptr))
	case reflect.Slice:
		sh := (*sliceHeader)(ptr)
		h.u64(uint64(sh.len))
		for i := range uintptr(sh.len) {
			h.hash(p.elem, add(sh.data, i*p.elem.size))
		}
	case reflect.Map:
		h.hashMap(p, ptr)
	case reflect.Interface:
		w := (*[2]unsafe.Pointer)(ptr)
		if w[0] == nil {
			h.u64(0)
			return
		}
		d := dynamicOf(p.t, ptr)
		// The dynamic type, by its word: the same in every state of a
		// search.
		h.u64(uint64(uintptr(w[0])))
		if d.ptr {
			h.object(d.p.elem, w[1])
		} else {
			h.hash(d.p, w[1])
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if *(*unsafe.Pointer)(ptr) != nil {
			panic(fmt.Sprintf("explore: cannot hash a %v", p.t))
		}
		h.u64(0)
	}
}

// object hashes the object of plan p at sp: the first time it is met,
// its value; then its number.
func (h *hasher) object(p *plan, sp unsafe.Pointer) {
	if sp == nil {
		h.u64(0)
		return
	}
	if k := slices.Index(h.seen, sp); k >= 0 {
		h.u64(uint64(k + 2))
		return
	}
	h.seen = append(h.seen, sp)
	h.u64(1)
	h.hash(p, sp)
}

func (h *hasher) hashMap(p *plan, ptr unsafe.Pointer) {
	if *(*unsafe.Pointer)(ptr) == nil {
		h.u64(0)
		return
	}
	m := reflect.NewAt(p.t, ptr).Elem()
	h.u64(uint64(m.Len()))
	k, v := reflect.New(p.t.Key()).Elem(), reflect.New(p.t.Elem()).Elem()
	entries := make([]uint64, 0, m.Len())
	e := &hasher{}
	for it := m.MapRange(); it.Next(); {
		k.SetIterKey(it)
		v.SetIterValue(it)
		e.reset()
		e.hash(p.key, k.Addr().UnsafePointer())
		e.hash(p.elem, v.Addr().UnsafePointer())
		entries = append(entries, e.sum())
	}
	slices.SortFunc(entries, cmp.Compare[uint64])
	for _, x := range entries {
		h.u64(x)
	}
}
