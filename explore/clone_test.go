package explore

import (
	"fmt"
	"net/netip"
	"reflect"
	"testing"
	"unsafe"
)

// walk walks a value and its copy side by side, by reflection (slow,
// independent of the plans): it reports the first difference, or the
// first memory that the two share and that a step of one could change
// under the other. Scratch fields (scratchFields) must be empty in a
// copy; unique's handles must be shared.
type walk struct {
	copied bool // b is a's copy (not an equal value built apart)
	seen   map[[2]uintptr]bool
}

// compare reports how b differs from a, or what they share.
func compare(a, b any, copied bool) string {
	w := walk{copied: copied, seen: map[[2]uintptr]bool{}}
	return w.compare(reflect.ValueOf(a), reflect.ValueOf(b), "")
}

func (w walk) compare(a, b reflect.Value, path string) string {
	a, b = openValue(a), openValue(b)
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() != b.IsNil() {
			return path + ": nil in one only"
		}
		if a.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path + ": shared pointer"
		}
		k := [2]uintptr{a.Pointer(), b.Pointer()}
		if w.seen[k] {
			return ""
		}
		w.seen[k] = true
		return w.compare(a.Elem(), b.Elem(), "(*"+path+")")
	case reflect.Interface:
		if a.IsNil() != b.IsNil() {
			return path + ": nil in one only"
		}
		if a.IsNil() {
			return ""
		}
		if a.Elem().Type() != b.Elem().Type() {
			return path + ": dynamic types differ"
		}
		return w.compare(addressable(a.Elem()), addressable(b.Elem()), path+".("+a.Elem().Type().String()+")")
	case reflect.Struct:
		if a.Type().PkgPath() == "unique" {
			if a.Field(0).Pointer() != b.Field(0).Pointer() {
				return path + ": a unique handle copied"
			}
			return ""
		}
		for i := range a.NumField() {
			f := a.Type().Field(i)
			if w.copied && scratchFields[f.Name] && f.Type.Kind() == reflect.Slice {
				if !b.Field(i).IsNil() {
					return path + "." + f.Name + ": scratch copied"
				}
				continue
			}
			if d := w.compare(a.Field(i), b.Field(i), path+"."+f.Name); d != "" {
				return d
			}
		}
	case reflect.Array:
		for i := range a.Len() {
			if d := w.compare(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return path + ": lengths differ"
		}
		if a.Cap() > 0 && a.Pointer() == b.Pointer() {
			return path + ": shared array"
		}
		for i := range a.Len() {
			if d := w.compare(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return path + ": sizes differ"
		}
		if !a.IsNil() && a.Pointer() == b.Pointer() {
			return path + ": shared map"
		}
		for it := a.MapRange(); it.Next(); {
			bv := b.MapIndex(it.Key())
			if !bv.IsValid() {
				return fmt.Sprintf("%s[%v]: missing", path, it.Key())
			}
			if d := w.compare(addressable(it.Value()), addressable(bv), fmt.Sprintf("%s[%v]", path, it.Key())); d != "" {
				return d
			}
		}
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if !a.IsNil() || !b.IsNil() {
			return path + ": not nil"
		}
	default:
		if !a.Equal(b) {
			return fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
	}
	return ""
}

// openValue makes v readable even when it is an unexported field.
func openValue(v reflect.Value) reflect.Value {
	if v.CanAddr() {
		return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
	}
	return v
}

func addressable(v reflect.Value) reflect.Value {
	p := reflect.New(v.Type()).Elem()
	p.Set(v)
	return p
}

// sample is a value of every kind the plans handle.
type sample struct {
	flag   bool
	small  int8 // padding follows
	n      int64
	name   string
	self   *sample
	inner  *leaf
	alias  *leaf // the same object as inner
	leaves []*leaf
	vals   []leaf
	byID   map[uint32]leaf
	deep   map[string][]int
	any    any
	iface  fmt.Stringer
	arr    [3]leaf
	addr   netip.Addr // a zone: a unique handle
	acts   []int      // scratch
	fn     func()
}

type leaf struct {
	a    uint16
	list []int
}

func (l leaf) String() string { return fmt.Sprint(l.a) }

func newSample() *sample {
	in := &leaf{a: 1, list: []int{1, 2}}
	s := &sample{flag: true, small: 3, n: 4, name: "x", inner: in, alias: in,
		leaves: []*leaf{in, {a: 2}}, vals: []leaf{{a: 3, list: []int{3}}},
		byID: map[uint32]leaf{5: {a: 5, list: []int{5}}}, deep: map[string][]int{"k": {6}},
		any: leaf{a: 7, list: []int{7}}, iface: &leaf{a: 8, list: []int{8}},
		arr: [3]leaf{{a: 9, list: []int{9}}}, addr: netip.MustParseAddr("fe80::1%eth0"), acts: []int{10}}
	s.self = s
	return s
}

// A plan's copy equals its original and shares no mutable memory with
// it, shared structure stays shared, and a change to the copy is not seen
// in the original; a plan's hash tells the two apart after the change,
// and not before.
func TestPlanCopiesDeeply(t *testing.T) {
	s := newSample()
	c := deepCopy(s)
	if d := compare(s, c, true); d != "" {
		t.Fatal(d)
	}
	if c.self != c || c.inner != c.alias || c.leaves[0] != c.inner || c.addr != s.addr {
		t.Fatalf("shared structure lost: self %v, alias %v, leaves[0] %v, addr %v", c.self == c, c.inner == c.alias, c.leaves[0] == c.inner, c.addr == s.addr)
	}
	hash := func(v *sample) uint64 {
		var h hasher
		h.reset()
		hashValue(&h, &v)
		return h.sum()
	}
	if hash(s) != hash(c) {
		t.Fatal("a copy hashes differently")
	}
	for _, change := range []struct {
		name string
		do   func(*sample)
	}{
		{"flag", func(v *sample) { v.flag = false }},
		{"small", func(v *sample) { v.small = 4 }},
		{"name", func(v *sample) { v.name = "y" }},
		{"through the alias", func(v *sample) { v.alias.list[0] = 99 }},
		{"a slice of pointers", func(v *sample) { v.leaves[1].a = 99 }},
		{"a map's value", func(v *sample) { v.byID[5].list[0] = 99 }},
		{"a map's slice", func(v *sample) { v.deep["k"][0] = 99 }},
		{"a boxed value's slice", func(v *sample) { v.any.(leaf).list[0] = 99 }},
		{"an interface's pointer", func(v *sample) { v.iface.(*leaf).a = 99 }},
		{"an array's slice", func(v *sample) { v.arr[0].list[0] = 99 }},
		{"an address", func(v *sample) { v.addr = netip.MustParseAddr("fe80::1%eth1") }},
	} {
		c := deepCopy(s)
		change.do(c)
		if d := compare(newSample(), s, false); d != "" {
			t.Fatalf("%s: changing the copy changed the original: %s", change.name, d)
		}
		if hash(c) == hash(s) {
			t.Errorf("%s: the hash does not see the change", change.name)
		}
	}
	s.acts = []int{11, 12}
	if hash(s) != hash(c) {
		t.Error("the hash sees a scratch field")
	}
	s.fn = func() {}
	defer func() {
		if recover() == nil {
			t.Error("a func field was copied")
		}
	}()
	deepCopy(s)
}
