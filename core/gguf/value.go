package gguf

import (
	"fmt"
	"strconv"
)

// ValueType is a GGUF metadata value type id as stored in the file.
type ValueType uint32

// Metadata value type ids, numbered as in the GGUF specification.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"}

// String returns the short name used in the inspect report ("u32", "string"...).
func (t ValueType) String() string {
	if int(t) < len(valueTypeNames) {
		return valueTypeNames[t]
	}
	return "type(" + strconv.FormatUint(uint64(t), 10) + ")"
}

// Valid reports whether t is a value type id defined by GGUF.
func (t ValueType) Valid() bool { return int(t) < len(valueTypeNames) }

// scalarSize is the encoded size of a fixed-size value, 0 for string/array.
func (t ValueType) scalarSize() int {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// minSize is the fewest bytes one encoded value of type t can occupy; it
// turns a claimed element count into a lower bound on bytes that must still
// be in the file.
func (t ValueType) minSize() int64 {
	switch t {
	case TypeString:
		return 8
	case TypeArray:
		return 4 + 8
	}
	return int64(t.scalarSize())
}

// Value is one metadata value. Data holds the Go value matching Type:
// uint8, int8, uint16, int16, uint32, int32, float32, bool, string, uint64,
// int64 or float64 for scalars. For arrays (Type == TypeArray) Elem is the
// element type and Data is the matching typed slice ([]uint8 ... []float64,
// []string, []bool), or []Value when Elem == TypeArray (each element an
// array Value). Typed slices keep 150k-entry vocabularies compact.
type Value struct {
	Type ValueType
	Elem ValueType
	Data any
}

// ValueOf builds a Value from a Go value of one of the types listed on Value
// (a scalar, a typed slice, or []Value of arrays for nested arrays).
func ValueOf(x any) (Value, error) {
	switch d := x.(type) {
	case uint8:
		return Value{Type: TypeUint8, Data: d}, nil
	case int8:
		return Value{Type: TypeInt8, Data: d}, nil
	case uint16:
		return Value{Type: TypeUint16, Data: d}, nil
	case int16:
		return Value{Type: TypeInt16, Data: d}, nil
	case uint32:
		return Value{Type: TypeUint32, Data: d}, nil
	case int32:
		return Value{Type: TypeInt32, Data: d}, nil
	case float32:
		return Value{Type: TypeFloat32, Data: d}, nil
	case bool:
		return Value{Type: TypeBool, Data: d}, nil
	case string:
		return Value{Type: TypeString, Data: d}, nil
	case uint64:
		return Value{Type: TypeUint64, Data: d}, nil
	case int64:
		return Value{Type: TypeInt64, Data: d}, nil
	case float64:
		return Value{Type: TypeFloat64, Data: d}, nil
	case []uint8:
		return Value{Type: TypeArray, Elem: TypeUint8, Data: d}, nil
	case []int8:
		return Value{Type: TypeArray, Elem: TypeInt8, Data: d}, nil
	case []uint16:
		return Value{Type: TypeArray, Elem: TypeUint16, Data: d}, nil
	case []int16:
		return Value{Type: TypeArray, Elem: TypeInt16, Data: d}, nil
	case []uint32:
		return Value{Type: TypeArray, Elem: TypeUint32, Data: d}, nil
	case []int32:
		return Value{Type: TypeArray, Elem: TypeInt32, Data: d}, nil
	case []float32:
		return Value{Type: TypeArray, Elem: TypeFloat32, Data: d}, nil
	case []bool:
		return Value{Type: TypeArray, Elem: TypeBool, Data: d}, nil
	case []string:
		return Value{Type: TypeArray, Elem: TypeString, Data: d}, nil
	case []uint64:
		return Value{Type: TypeArray, Elem: TypeUint64, Data: d}, nil
	case []int64:
		return Value{Type: TypeArray, Elem: TypeInt64, Data: d}, nil
	case []float64:
		return Value{Type: TypeArray, Elem: TypeFloat64, Data: d}, nil
	case []Value:
		for i, v := range d {
			if v.Type != TypeArray {
				return Value{}, fmt.Errorf("gguf: nested array element %d is %s, not an array", i, v.Type)
			}
		}
		return Value{Type: TypeArray, Elem: TypeArray, Data: d}, nil
	}
	return Value{}, fmt.Errorf("gguf: %T is not a GGUF value type: %w", x, ErrType)
}

// Len is the element count of an array value, 0 for a scalar.
func (v Value) Len() int {
	if v.Type != TypeArray {
		return 0
	}
	switch d := v.Data.(type) {
	case []uint8:
		return len(d)
	case []int8:
		return len(d)
	case []uint16:
		return len(d)
	case []int16:
		return len(d)
	case []uint32:
		return len(d)
	case []int32:
		return len(d)
	case []float32:
		return len(d)
	case []bool:
		return len(d)
	case []string:
		return len(d)
	case []uint64:
		return len(d)
	case []int64:
		return len(d)
	case []float64:
		return len(d)
	case []Value:
		return len(d)
	}
	return 0
}

// TypeName describes the value's type, e.g. "u32" or "array[string]" or
// "array[array[i32]]" (the inner type of a nested array is taken from its
// first element; "array[array]" when empty).
func (v Value) TypeName() string {
	if v.Type != TypeArray {
		return v.Type.String()
	}
	if v.Elem == TypeArray {
		if d, ok := v.Data.([]Value); ok && len(d) > 0 {
			return "array[" + d[0].TypeName() + "]"
		}
		return "array[array]"
	}
	return "array[" + v.Elem.String() + "]"
}

// asUint64 returns an integer value as uint64 if it is non-negative.
func (v Value) asUint64() (uint64, bool) {
	switch d := v.Data.(type) {
	case uint8:
		return uint64(d), true
	case uint16:
		return uint64(d), true
	case uint32:
		return uint64(d), true
	case uint64:
		return d, true
	case int8:
		return uint64(d), d >= 0
	case int16:
		return uint64(d), d >= 0
	case int32:
		return uint64(d), d >= 0
	case int64:
		return uint64(d), d >= 0
	}
	return 0, false
}

// asInt64 returns an integer value as int64 if it fits.
func (v Value) asInt64() (int64, bool) {
	switch d := v.Data.(type) {
	case int8:
		return int64(d), true
	case int16:
		return int64(d), true
	case int32:
		return int64(d), true
	case int64:
		return d, true
	case uint8:
		return int64(d), true
	case uint16:
		return int64(d), true
	case uint32:
		return int64(d), true
	case uint64:
		return int64(d), d <= 1<<63-1
	}
	return 0, false
}
