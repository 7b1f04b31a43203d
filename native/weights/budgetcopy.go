package weights

import "context"

// Budget copy strategy: the loader preads each group into a cache-owned
// buffer, so no file page is ever mapped and the page cache's folio sizes
// do not matter; it costs one more read and write of every weight byte per
// pass. The cache's buffers are the budget.

// tensorAlign aligns each tensor inside a group buffer, so kernels see the
// same alignment a GGUF file gives (32) or better.
const tensorAlign = 64

// copyLayout places each tensor in the group buffer at an aligned offset;
// the group is charged the buffer.
func copyLayout(g *group) {
	for _, t := range g.tensors {
		g.size = (g.size + tensorAlign - 1) / tensorAlign * tensorAlign
		g.offs = append(g.offs, g.size)
		g.size += int64(t.Info.Size)
	}
}

// copyViews slices the group's tensors out of its loaded buffer.
func copyViews(gr *group, buf []byte) [][]byte {
	out := make([][]byte, len(gr.tensors))
	for i, t := range gr.tensors {
		end := gr.offs[i] + int64(t.Info.Size)
		out[i] = buf[gr.offs[i]:end:end]
	}
	return out
}

// loadCopy preads the group's tensors into dst, in chunks so a cancelled
// load stops promptly.
func (s *source) loadCopy(ctx context.Context, gr *group, dst []byte) error {
	for i, t := range gr.tensors {
		buf := dst[gr.offs[i] : gr.offs[i]+int64(t.Info.Size)]
		for off := int64(0); off < int64(len(buf)); off += loadChunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			end := min(off+loadChunk, int64(len(buf)))
			if err := s.st.ReadAt(buf[off:end], t.Off+off, "tensor "+t.Info.Name); err != nil {
				return err
			}
		}
	}
	return nil
}
