package serve

import (
	"fmt"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/model"
)

// KVCapacityBytes is the most memory the KV caches (cache type kv) of
// slots sequences of perSlot positions each can hold for a model of
// configuration c: the pages (model.PageSize positions) a full slot
// allocates, keys and values, every layer. The caches allocate pages as
// sequences grow, so the engine's KVBytes reaches this only when every
// slot is full; a memory budget reserves it up front so that a model
// admitted within the budget cannot outgrow it.
func KVCapacityBytes(c model.Config, kv ggml.Type, slots, perSlot int) (int64, error) {
	rb, err := ggml.RowSize(kv, uint64(c.HeadDim))
	if err != nil {
		return 0, fmt.Errorf("serve: KV cache row: %w", err)
	}
	pages := int64((perSlot + model.PageSize - 1) / model.PageSize)
	return int64(slots) * pages * model.PageSize * int64(rb) * int64(c.NHeadKV) * 2 * int64(c.NLayer), nil
}
