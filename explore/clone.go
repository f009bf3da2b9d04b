package explore

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
	"unsafe"
)

// The election machines keep their state in unexported fields, and the
// election package has no Clone (nor should it for the agent's sake):
// the explorer copies and hashes them by reflection, reading and writing
// unexported fields through unsafe pointers. Pointers are followed and
// shared structure is kept (a machine's core points back to the machine
// itself); a func or chan field that is not nil cannot be copied and
// panics, so that a machine that grows one is noticed at once.

type ptrKey struct {
	p uintptr
	t reflect.Type
}

type copier struct{ seen map[ptrKey]reflect.Value }

// deepCopy returns a copy of v that shares no memory with it.
func deepCopy[T any](v T) T {
	c := copier{seen: make(map[ptrKey]reflect.Value)}
	src := reflect.ValueOf(&v).Elem()
	dst := reflect.New(src.Type()).Elem()
	c.copy(dst, src)
	return dst.Interface().(T)
}

// open makes v readable and, when addressable, settable, even when it is
// an unexported field.
func open(v reflect.Value) reflect.Value {
	if v.CanAddr() {
		return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
	}
	return v
}

func (c *copier) copy(dst, src reflect.Value) {
	dst, src = open(dst), open(src)
	switch src.Kind() {
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		k := ptrKey{src.Pointer(), src.Type()}
		if p, ok := c.seen[k]; ok {
			dst.Set(p)
			return
		}
		p := reflect.New(src.Type().Elem())
		c.seen[k] = p
		c.copy(p.Elem(), src.Elem())
		dst.Set(p)
	case reflect.Interface:
		if src.IsNil() {
			return
		}
		e := src.Elem()
		ne := reflect.New(e.Type()).Elem()
		// The element of an interface is not addressable: copy it to
		// a variable first, so that its unexported fields can be read.
		tmp := reflect.New(e.Type()).Elem()
		tmp.Set(e)
		c.copy(ne, tmp)
		dst.Set(ne)
	case reflect.Struct:
		for i := range src.NumField() {
			c.copy(dst.Field(i), src.Field(i))
		}
	case reflect.Array:
		for i := range src.Len() {
			c.copy(dst.Index(i), src.Index(i))
		}
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		n := reflect.MakeSlice(src.Type(), src.Len(), src.Cap())
		for i := range src.Len() {
			c.copy(n.Index(i), src.Index(i))
		}
		dst.Set(n)
	case reflect.Map:
		if src.IsNil() {
			return
		}
		n := reflect.MakeMapWithSize(src.Type(), src.Len())
		it := src.MapRange()
		for it.Next() {
			k := reflect.New(src.Type().Key()).Elem()
			c.copy(k, it.Key())
			v := reflect.New(src.Type().Elem()).Elem()
			tmp := reflect.New(src.Type().Elem()).Elem()
			tmp.Set(it.Value())
			c.copy(v, tmp)
			n.SetMapIndex(k, v)
		}
		dst.Set(n)
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if !src.IsNil() {
			panic(fmt.Sprintf("explore: cannot copy a %v", src.Type()))
		}
	default:
		dst.Set(src)
	}
}

// hasher is FNV-1a over the values it is given.
type hasher struct {
	h    uint64
	seen map[ptrKey]uint64
	buf  [8]byte
}

const fnvOffset, fnvPrime = 14695981039346656037, 1099511628211

func newHasher() *hasher { return &hasher{h: fnvOffset} }

func (h *hasher) u64(v uint64) {
	binary.LittleEndian.PutUint64(h.buf[:], v)
	for _, b := range h.buf {
		h.h ^= uint64(b)
		h.h *= fnvPrime
	}
}

func (h *hasher) str(s string) {
	h.u64(uint64(len(s)))
	for i := range len(s) {
		h.h ^= uint64(s[i])
		h.h *= fnvPrime
	}
}

// skipFields are scratch buffers of the machines, whose contents past a
// step do not matter.
var skipFields = map[string]bool{"acts": true, "scratch": true, "ids": true}

// value hashes v, following pointers (each object once) and hashing a
// map's entries in an order of their own hashes.
func (h *hasher) value(v reflect.Value) {
	v = open(v)
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			h.u64(0)
			return
		}
		k := ptrKey{v.Pointer(), v.Type()}
		if n, ok := h.seen[k]; ok {
			h.u64(n)
			return
		}
		if h.seen == nil {
			h.seen = make(map[ptrKey]uint64)
		}
		h.seen[k] = uint64(len(h.seen) + 1)
		h.u64(1)
		h.value(v.Elem())
	case reflect.Interface:
		if v.IsNil() {
			h.u64(0)
			return
		}
		e := v.Elem()
		tmp := reflect.New(e.Type()).Elem()
		tmp.Set(e)
		h.str(e.Type().String())
		h.value(tmp)
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if skipFields[t.Field(i).Name] {
				continue
			}
			h.value(v.Field(i))
		}
	case reflect.Array:
		for i := range v.Len() {
			h.value(v.Index(i))
		}
	case reflect.Slice:
		h.u64(uint64(v.Len()))
		for i := range v.Len() {
			h.value(v.Index(i))
		}
	case reflect.Map:
		h.u64(uint64(v.Len()))
		var entries []uint64
		it := v.MapRange()
		for it.Next() {
			e := &hasher{h: fnvOffset}
			e.value(it.Key())
			tmp := reflect.New(v.Type().Elem()).Elem()
			tmp.Set(it.Value())
			e.value(tmp)
			entries = append(entries, e.h)
		}
		slices.SortFunc(entries, cmp.Compare[uint64])
		for _, e := range entries {
			h.u64(e)
		}
	case reflect.Bool:
		if v.Bool() {
			h.u64(1)
		} else {
			h.u64(0)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		h.u64(uint64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		h.u64(v.Uint())
	case reflect.Float32, reflect.Float64:
		h.u64(math.Float64bits(v.Float()))
	case reflect.String:
		h.str(v.String())
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if !v.IsNil() {
			panic(fmt.Sprintf("explore: cannot hash a %v", v.Type()))
		}
		h.u64(0)
	default:
		panic(fmt.Sprintf("explore: cannot hash a %v", v.Type()))
	}
}
