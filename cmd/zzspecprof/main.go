package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/memvanta/memvanta/core/ggml"
	"github.com/memvanta/memvanta/core/model"
	"github.com/memvanta/memvanta/kernels"
	"github.com/memvanta/memvanta/native/weights"
)

func open(p string) *model.Model {
	rt, err := weights.Open(context.Background(), p, weights.Options{Mode: "resident"})
	if err != nil {
		panic(err)
	}
	cfg, err := model.ConfigFromGGUF(rt.File())
	if err != nil {
		panic(err)
	}
	m, err := model.New(cfg, rt.Weights(), model.Options{Threads: 2, Batch: 32, Ctx: 512, KVType: ggml.F16, Kernels: kernels.Select()})
	if err != nil {
		panic(err)
	}
	return m
}

func main() {
	ctx := context.Background()
	t := open(os.Args[1])
	d := open(os.Args[2])
	toks := make([]int32, 17)
	for i := range toks {
		toks[i] = int32(100 + i*7)
	}
	rows := make([]float32, 17*t.Cfg.NVocab)
	for rep := 0; rep < 3; rep++ {
		t.Reset()
		t.Forward(ctx, toks[:4])
		t0 := time.Now()
		for i := 0; i < 16; i++ {
			t.Forward(ctx, toks[i:i+1])
		}
		one := time.Since(t0) / 16
		t.Reset()
		t.Forward(ctx, toks[:4])
		t0 = time.Now()
		t.ForwardRows(ctx, toks, rows)
		fr := time.Since(t0)
		t.Reset()
		t.Forward(ctx, toks[:4])
		t0 = time.Now()
		t.Forward(ctx, toks)
		fb := time.Since(t0)
		d.Reset()
		d.Forward(ctx, toks[:4])
		t0 = time.Now()
		for i := 0; i < 16; i++ {
			d.Forward(ctx, toks[i:i+1])
		}
		dd := time.Since(t0) / 16
		fmt.Printf("target 1 tok %v | ForwardRows 17 %v (%.2fx one) | Forward 17 packed %v (%.2fx) | draft 1 tok %v (%.2fx)\n", one, fr, float64(fr)/float64(one), fb, float64(fb)/float64(one), dd, float64(dd)/float64(one))
	}
}
