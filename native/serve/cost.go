package serve

import (
	"fmt"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/model"
)

// KVCapacityBytes is the most memory the KV caches (key type k, value type v) of
// slots sequences of perSlot positions each can hold for a model of
// configuration c: the pages (model.PageSize positions) a full slot
// allocates, keys and values, every layer. The caches allocate pages as
// sequences grow, so the engine's KVBytes reaches this only when every
// slot is full; a memory budget reserves it up front so that a model
// admitted within the budget cannot outgrow it.
func KVCapacityBytes(c model.Config, k, v ggml.Type, slots, perSlot int) (int64, error) {
	rk, err := ggml.RowSize(k, uint64(c.HeadDim))
	if err != nil {
		return 0, fmt.Errorf("serve: KV cache key row: %w", err)
	}
	rv, err := ggml.RowSize(v, uint64(c.HeadDim))
	if err != nil {
		return 0, fmt.Errorf("serve: KV cache value row: %w", err)
	}
	pages := int64((perSlot + model.PageSize - 1) / model.PageSize)
	return int64(slots) * pages * model.PageSize * int64(rk+rv) * int64(c.NHeadKV) * int64(c.NLayer), nil
}
