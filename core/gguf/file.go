package gguf

import (
	"fmt"
	"math"
)

// Tensor returns the tensor named name.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	if f.tensorIndex != nil {
		i, ok := f.tensorIndex[name]
		if !ok {
			return TensorInfo{}, false
		}
		return f.Tensors[i], true
	}
	for _, t := range f.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return TensorInfo{}, false
}

// Get returns the value of key.
func (f *File) Get(key string) (Value, bool) {
	if f.kvIndex != nil {
		i, ok := f.kvIndex[key]
		if !ok {
			return Value{}, false
		}
		return f.KV[i].Value, true
	}
	for _, kv := range f.KV {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return Value{}, false
}

func (f *File) get(key string) (Value, error) {
	v, ok := f.Get(key)
	if !ok {
		return Value{}, fmt.Errorf("%w: %s", ErrNotFound, QuoteName(key))
	}
	return v, nil
}

func typeErr(key string, v Value, want string) error {
	return fmt.Errorf("%w: %s is %s, want %s", ErrType, QuoteName(key), v.TypeName(), want)
}

// String returns a string value.
func (f *File) String(key string) (string, error) {
	v, err := f.get(key)
	if err != nil {
		return "", err
	}
	s, ok := v.Data.(string)
	if !ok {
		return "", typeErr(key, v, "string")
	}
	return s, nil
}

// Uint64 returns any non-negative integer value.
func (f *File) Uint64(key string) (uint64, error) {
	v, err := f.get(key)
	if err != nil {
		return 0, err
	}
	u, ok := v.asUint64()
	if !ok {
		return 0, typeErr(key, v, "a non-negative integer")
	}
	return u, nil
}

// Uint32 returns any integer value that fits in a uint32; writers disagree
// on whether counts are u32, i32 or u64, so the type is not insisted on.
func (f *File) Uint32(key string) (uint32, error) {
	u, err := f.Uint64(key)
	if err != nil {
		return 0, err
	}
	if u > math.MaxUint32 {
		return 0, fmt.Errorf("%w: %s = %d does not fit in uint32", ErrType, QuoteName(key), u)
	}
	return uint32(u), nil
}

// Int64 returns any integer value that fits in an int64.
func (f *File) Int64(key string) (int64, error) {
	v, err := f.get(key)
	if err != nil {
		return 0, err
	}
	i, ok := v.asInt64()
	if !ok {
		return 0, typeErr(key, v, "an integer that fits int64")
	}
	return i, nil
}

// Float32 returns an f32 or f64 value.
func (f *File) Float32(key string) (float32, error) {
	v, err := f.get(key)
	if err != nil {
		return 0, err
	}
	switch d := v.Data.(type) {
	case float32:
		return d, nil
	case float64:
		return float32(d), nil
	}
	return 0, typeErr(key, v, "f32 or f64")
}

// Bool returns a bool value.
func (f *File) Bool(key string) (bool, error) {
	v, err := f.get(key)
	if err != nil {
		return false, err
	}
	b, ok := v.Data.(bool)
	if !ok {
		return false, typeErr(key, v, "bool")
	}
	return b, nil
}

// Strings returns an array of strings (shared with the File; do not modify).
func (f *File) Strings(key string) ([]string, error) {
	v, err := f.get(key)
	if err != nil {
		return nil, err
	}
	s, ok := v.Data.([]string)
	if !ok {
		return nil, typeErr(key, v, "array[string]")
	}
	return s, nil
}

// Float32s returns an array of f32 (shared with the File; do not modify).
func (f *File) Float32s(key string) ([]float32, error) {
	v, err := f.get(key)
	if err != nil {
		return nil, err
	}
	s, ok := v.Data.([]float32)
	if !ok {
		return nil, typeErr(key, v, "array[f32]")
	}
	return s, nil
}

// Int32s returns an array of i32 (shared with the File; do not modify).
func (f *File) Int32s(key string) ([]int32, error) {
	v, err := f.get(key)
	if err != nil {
		return nil, err
	}
	s, ok := v.Data.([]int32)
	if !ok {
		return nil, typeErr(key, v, "array[i32]")
	}
	return s, nil
}
