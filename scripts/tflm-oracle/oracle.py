#!/usr/bin/env python3
"""The TFLM oracle: memplan's TFLite plans against TensorFlow Lite for Microcontrollers itself.

PyPI's tflite-micro wheel runs TFLM's allocator (RecordingMicroAllocator, GreedyMemoryPlanner)
and its reference kernels. For every committed .tflite under testdata/models/tflite:

  head     TFLM's arena head (print_allocations(), read from C stdout at the file-descriptor
           level) equals memplan's `tflm-greedy` peak, on every model TFLM runs. Models whose
           kernels request scratch buffers (not in the file; memplan sizes them from TFLM's
           reference kernel table) are listed in expect.yaml: memplan must say it plans them.
  export   `memplan plan M -s S --emit-tflite OUT --format json -o plan.json` for S =
           tflm-greedy and optimal: the file's OfflineMemoryAllocation entry read back here
           with the wheel's own schema (version 0, subgraphs, n = every tensor, an offset for
           exactly the tensors TFLM plans, -1 elsewhere), TFLM's head on it equals the JSON's
           peak (the JSON holds the plan TFLM runs: scratch where TFLM places it online), and
           its outputs on a fixed random input are bit-identical to the unplanned model's.
  overlap  the same file with every offset set to 0: TFLM accepts it silently, and the output
           comparison must catch it (person_detect).
  header   `--emit-header OUT.h` compiles with `cc` in a C program that checks every offset
           against the file's entry, the BufferPlan against the planned offsets in order then
           the JSON's scratch (workspace) offsets, and the head against the JSON's peak.

`--verify PLANNED --original MODEL [--peak N]` checks one planned file alone (the page's
download). Each TFLM run is a child process (some models crash TFLM). Models today's TFLM refuses to run
are listed in expect.yaml with the message TFLM gives. Ends with "N passed, N failed".
"""

import argparse
import json
import os
import pathlib
import struct
import subprocess
import sys
import tempfile

SEED = 20261206
OFFLINE = b"OfflineMemoryAllocation"
# TFLite TensorType -> bytes per element as TFLM sizes them (memory_helpers.cc TfLiteTypeSizeOf;
# INT4 is unpacked to one byte)
ELEMENT_BYTES = {0: 4, 1: 2, 2: 4, 3: 1, 4: 8, 6: 1, 7: 2, 8: 8, 9: 1, 10: 8, 11: 16, 12: 8,
                 15: 4, 16: 2, 17: 1, 18: 2}


# ---------------------------------------------------------------- the child: one TFLM run
def capture_fd(fn):
    """Runs fn with C stdout and stderr (fd 1 and 2) captured; returns the text."""
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile() as tmp:
        saved = [os.dup(1), os.dup(2)]
        os.dup2(tmp.fileno(), 1)
        os.dup2(tmp.fileno(), 2)
        try:
            fn()
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
        tmp.seek(0)
        return tmp.read().decode(errors="replace")


def child(path, preserve, result):
    import numpy as np
    from tflite_micro.python.tflite_micro import runtime

    config = (runtime.InterpreterConfig.kPreserveAllTensors if preserve
              else runtime.InterpreterConfig.kAllocationRecording)
    out = {}
    try:
        it = runtime.Interpreter.from_file(path, intrepreter_config=config)
        rng = np.random.default_rng(SEED)
        i = 0
        while True:
            try:
                d = it.get_input_details(i)
            except Exception:
                break
            dt = np.dtype(d["dtype"])
            shape = [int(x) for x in d["shape"]]
            if dt.kind in "iu":
                lim = np.iinfo(dt)
                x = rng.integers(lim.min, lim.max, size=shape, endpoint=True, dtype=dt)
            elif dt.kind == "b":
                x = rng.integers(0, 1, size=shape, endpoint=True).astype(dt)
            else:
                x = rng.standard_normal(size=shape).astype(dt)
            it.set_input(x, i)
            i += 1
        it.invoke()
        if not preserve:
            text = capture_fd(it.print_allocations)
            heads = [int(l.split()[-2]) for l in text.splitlines() if "allocation head" in l]
            if len(heads) != 1:
                raise RuntimeError(f"no head in print_allocations(): {text!r}")
            out["head"] = heads[0]
        outputs = []
        j = 0
        while True:
            try:
                y = np.asarray(it.get_output(j))
            except Exception:
                break
            outputs.append([str(y.dtype), list(y.shape), y.tobytes().hex()])
            j += 1
        out["outputs"] = outputs
    except Exception as e:  # reported to the parent, which compares with expect.yaml
        out["error"] = f"{type(e).__name__}: {e}"
    with open(result, "w") as f:
        json.dump(out, f)


def run_tflm(path, preserve=False):
    """TFLM on `path` in a child process: {"head", "outputs"} or {"error"} (with its log)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tmp:
        result = tmp.name
    try:
        cmd = [sys.executable, __file__, "--child", str(path), "--result", result]
        if preserve:
            cmd.append("--preserve")
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
        try:
            with open(result) as f:
                out = json.load(f)
        except (OSError, ValueError):
            out = {"error": f"TFLM crashed (exit {p.returncode})"}
        if "error" in out:
            out["log"] = (p.stdout + p.stderr)[-2000:]
        return out
    finally:
        os.unlink(result)


# ---------------------------------------------------------------- reading a model independently
def load_model(data):
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as schema
    return schema.ModelT.InitFromPackedBuf(bytearray(data), 0)


def offline_entry(model):
    """The words of the last OfflineMemoryAllocation entry (TFLM reads the last), or None."""
    words = None
    for m in model.metadata or []:
        if m.name == OFFLINE:
            raw = bytes(bytearray(model.buffers[m.buffer].data))
            words = list(struct.unpack(f"<{len(raw) // 4}i", raw))
    return words


def planned_by_tflm(model):
    """Global indices of the tensors TFLM plans (micro_allocation_info.cc
    InitializeAllocationInfo: no data, not variable, a nonzero byte length)."""
    planned, base = [], 0
    for sg in model.subgraphs:
        for k, t in enumerate(sg.tensors or []):
            buf = model.buffers[t.buffer] if t.buffer < len(model.buffers) else None
            has_data = buf is not None and ((buf.data is not None and len(buf.data) > 0)
                                            or (buf.offset or 0) > 1)
            n = 1
            for d in (t.shape if t.shape is not None else []):
                n *= int(d)
            size = n * ELEMENT_BYTES.get(t.type, 0)
            if not has_data and not t.isVariable and size > 0:
                planned.append(base + k)
        base += len(sg.tensors or [])
    return planned, base


# ---------------------------------------------------------------- the checks
class Tally:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.rows = []

    def check(self, name, ok, detail="", info=""):
        """Counts one check; `detail` says why it failed, `info` what it measured."""
        if ok:
            self.passed += 1
            print(f"ok   {name}{': ' + info if info else ''}")
        else:
            self.failed += 1
            print(f"FAIL {name}: {detail or info}")
        return ok


def memplan_plan(memplan, model, strategy, work, extra=()):
    """memplan plan ... -s strategy --format json -o plan.json [extra]: (json, stderr)."""
    plan_json = work / f"{strategy}.json"
    cmd = [memplan, "plan", str(model), "-s", strategy, "--format", "json", "-o", str(plan_json),
           *extra]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return json.loads(plan_json.read_text()), p.stderr.strip()


def check_export(t, memplan, rel, model, strategy, work, base):
    """(b) and (c) for one strategy; returns the exported path or None."""
    out = work / f"{strategy}.tflite"
    header = work / f"{strategy}.h"
    plan, err = memplan_plan(memplan, model, strategy, work,
                             ["--emit-tflite", str(out), "--emit-header", str(header)])
    if not t.check(f"{rel} {strategy}: memplan exports", plan is not None, err):
        return None
    peak = plan["plans"][0]["peak_bytes"]
    data = out.read_bytes()
    m = load_model(data)
    words = offline_entry(m)
    planned, total = planned_by_tflm(m)
    ok = words is not None and words[:3] == [0, len(m.subgraphs), total] and len(words) == 3 + total
    offsets = words[3:] if ok else []
    with_offset = [i for i, o in enumerate(offsets) if o != -1]
    t.check(f"{rel} {strategy}: the file's OfflineMemoryAllocation",
            ok and with_offset == planned and all(o % 16 == 0 for o in offsets if o != -1),
            info=f"header {words[:3] if words else None}, offsets for {len(with_offset)} tensors, "
            f"TFLM plans {len(planned)}")
    run = run_tflm(out)
    if "error" in run:
        t.check(f"{rel} {strategy}: TFLM runs the plan", False, run["error"] + "\n" + run.get("log", ""))
        return None
    t.check(f"{rel} {strategy}: TFLM head = memplan peak", run["head"] == peak,
            info=f"TFLM {run['head']} B, memplan {peak} B")
    t.check(f"{rel} {strategy}: outputs bit-identical to the unplanned model's",
            run["outputs"] == base["outputs"], "outputs differ")
    check_header(t, rel, strategy, header, offsets, scratch_offsets(plan), peak, work)
    return out


def scratch_offsets(plan):
    """The plan JSON's workspace (scratch) buffers' offsets, in buffer order."""
    return [b["offset"] for b in plan["plans"][0]["buffers"] if b.get("kind") == "workspace"]


def check_header(t, rel, strategy, header, offsets, scratch, peak, work):
    planned = [o for o in offsets if o != -1] + scratch
    prog = work / f"{strategy}_header_test.c"
    arr = lambda v: "{" + ", ".join(str(x) for x in (v or [0])) + "}"
    prog.write_text(f"""#include <stddef.h>
#include <stdio.h>
#include "{header.name}"
static const int32_t want[] = {arr(offsets)};
static const int32_t want_planned[] = {arr(planned)};
int main(void) {{
    int bad = 0, i;
    if (MEMPLAN_ARENA_HEAD_BYTES != {peak}u) {{ printf("head %u\\n", (unsigned)MEMPLAN_ARENA_HEAD_BYTES); bad = 1; }}
    if (MEMPLAN_TENSOR_COUNT != {len(offsets)}) {{ printf("tensor count\\n"); bad = 1; }}
    for (i = 0; i < {len(offsets)}; i++) if (memplan_offsets[i] != want[i]) {{ printf("offset %d\\n", i); bad = 1; }}
    if (memplan_buffer_plan.buffer_count != {len(planned)}) {{ printf("buffer count\\n"); bad = 1; }}
    for (i = 0; i < {len(planned)}; i++)
        if (memplan_buffer_plan.buffer_plan_entries[i].offset != want_planned[i]) {{ printf("entry %d\\n", i); bad = 1; }}
    /* tflite::BufferPlan's layout: int32 count, then int32 offsets */
    if (offsetof(struct memplan_buffer_plan_t, buffer_plan_entries) != 4 ||
        sizeof(memplan_buffer_plan.buffer_plan_entries[0]) != 4) {{ printf("layout\\n"); bad = 1; }}
    return bad;
}}
""")
    exe = work / f"{strategy}_header_test"
    cc = subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", str(header.parent),
                         "-o", str(exe), str(prog)], capture_output=True, text=True)
    if not t.check(f"{rel} {strategy}: the C header compiles", cc.returncode == 0, cc.stderr[-1500:]):
        return
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    t.check(f"{rel} {strategy}: the C header's offsets and head", r.returncode == 0, r.stdout[-500:])


def check_overlap(t, rel, exported, base, work):
    """Every offset set to 0 in place: TFLM must accept it and the outputs must differ."""
    data = bytearray(exported.read_bytes())
    m = load_model(bytes(data))
    words = offline_entry(m)
    seq = struct.pack(f"<{len(words)}i", *words)
    at = data.find(seq)
    ok = at >= 0 and data.find(seq, at + 1) < 0
    if not t.check(f"{rel} overlap: the plan's words found once", ok):
        return
    zero = words[:3] + [0 if o != -1 else -1 for o in words[3:]]
    data[at:at + len(seq)] = struct.pack(f"<{len(zero)}i", *zero)
    bad = work / "overlapping.tflite"
    bad.write_bytes(bytes(data))
    run = run_tflm(bad)
    t.check(f"{rel} overlap: TFLM runs an overlapping plan and the outputs differ",
            "error" not in run and run["outputs"] != base["outputs"],
            run.get("error", "outputs identical: the comparison would not catch it"))


def verify(planned, original, peak):
    """One planned file against its original: an entry for exactly the tensors TFLM plans,
    TFLM runs it (head = `peak` when given) with outputs bit-identical to the original's."""
    t = Tally()
    m = load_model(pathlib.Path(planned).read_bytes())
    words = offline_entry(m)
    want, total = planned_by_tflm(m)
    offsets = words[3:] if words else []
    t.check(f"{planned}: OfflineMemoryAllocation",
            words is not None and words[:3] == [0, len(m.subgraphs), total]
            and len(offsets) == total and [i for i, o in enumerate(offsets) if o != -1] == want
            and all(o % 16 == 0 for o in offsets if o != -1),
            f"entry {words[:3] if words else None}, {len(offsets)} offsets, {total} tensors")
    base, run = run_tflm(original), run_tflm(planned)
    if t.check(f"{planned}: TFLM runs both", "error" not in base and "error" not in run,
               base.get("error", "") + run.get("error", "")):
        if peak is not None:
            t.check(f"{planned}: TFLM head = {peak}", run["head"] == peak, info=f"TFLM {run['head']} B")
        t.check(f"{planned}: outputs bit-identical to {original}'s",
                run["outputs"] == base["outputs"], "outputs differ")
    print(f"{t.passed} passed, {t.failed} failed")
    return 0 if t.failed == 0 else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--result")
    ap.add_argument("--preserve", action="store_true", help="TFLM's kPreserveAllTensors (linear planner)")
    ap.add_argument("--memplan")
    ap.add_argument("--models", default="testdata/models/tflite")
    ap.add_argument("--work", default="target/tflm-oracle/work")
    ap.add_argument("--table")
    ap.add_argument("--only")
    ap.add_argument("--verify", metavar="PLANNED.tflite",
                    help="check one planned file (e.g. the page's download) against --original")
    ap.add_argument("--original", metavar="MODEL.tflite")
    ap.add_argument("--peak", type=int, help="with --verify: the head TFLM must report")
    args = ap.parse_args()
    if args.child:
        return child(args.child, args.preserve, args.result)
    if args.verify:
        return verify(args.verify, args.original, args.peak)

    import yaml
    here = pathlib.Path(__file__).resolve().parent
    expect = yaml.safe_load((here / "expect.yaml").read_text())
    refused = expect.get("refused") or {}
    scratch_models = expect.get("scratch") or {}
    overlap_models = expect.get("overlap") or []
    memplan_warns = expect.get("memplan_warns") or {}
    models = sorted(pathlib.Path(args.models).rglob("*.tflite"))
    t = Tally()
    t.check("committed .tflite models found", len(models) >= 10, info=f"{len(models)} under {args.models}")
    rows = []
    for model in models:
        rel = model.relative_to(args.models).as_posix()
        if args.only and args.only not in rel:
            continue
        work = pathlib.Path(args.work) / rel.replace("/", "__")
        work.mkdir(parents=True, exist_ok=True)
        greedy, err = memplan_plan(args.memplan, model, "tflm-greedy", work)
        base = run_tflm(model)
        if rel in memplan_warns:
            t.check(f"{rel}: memplan warns ({memplan_warns[rel]})", memplan_warns[rel] in err,
                    err[-400:])
        if rel in refused:
            t.check(f"{rel}: TFLM refuses it ({refused[rel]})",
                    "error" in base and refused[rel] in base.get("log", "") + base["error"],
                    base.get("error", "TFLM ran it") + " " + base.get("log", "")[-300:])
            t.check(f"{rel}: memplan plans it with tflm-greedy", greedy is not None, err)
            rows.append((rel, "TFLM refuses", greedy and greedy["plans"][0]["peak_bytes"],
                         greedy and greedy["problem"]["lower_bound_bytes"], None))
            continue
        if not t.check(f"{rel}: TFLM runs it", "error" not in base,
                       base.get("error", "") + base.get("log", "")):
            continue
        if not t.check(f"{rel}: memplan plans it with tflm-greedy", greedy is not None, err):
            continue
        peak = greedy["plans"][0]["peak_bytes"]
        lb = greedy["problem"]["lower_bound_bytes"]
        if rel in scratch_models:
            # TFLM's kernels request scratch buffers at Prepare; the file does not hold them,
            # memplan sizes them from TFLM's reference kernel table and plans them
            t.check(f"{rel}: memplan plans the kernels' scratch buffers ({scratch_models[rel]})",
                    "scratch buffers are not in the file" in err and scratch_models[rel] in err
                    and scratch_offsets(greedy), err[-300:])
        t.check(f"{rel}: TFLM head = memplan tflm-greedy peak", base["head"] == peak,
                info=f"TFLM {base['head']} B, memplan {peak} B")
        exported = check_export(t, args.memplan, rel, model, "tflm-greedy", work, base)
        best = None
        if check_export(t, args.memplan, rel, model, "optimal", work, base):
            best, _ = memplan_plan(args.memplan, model, "optimal", work)
        if best:
            bp = best["plans"][0]["peak_bytes"]
            t.check(f"{rel}: optimal never above tflm-greedy", bp <= peak, info=f"{bp} B vs {peak} B")
        if exported and rel in overlap_models:
            check_overlap(t, rel, exported, base, work)
        rows.append((rel, base["head"], peak, lb, best and best["plans"][0]["peak_bytes"]))
    if args.table:
        lines = ["| model | TFLM head (B) | memplan tflm-greedy (B) | max-live bound (B) | optimal (B) |",
                 "|---|---|---|---|---|"]
        for r in rows:
            lines.append("| " + " | ".join("—" if v is None else (f"{v:,}" if isinstance(v, int) else str(v)) for v in r) + " |")
        pathlib.Path(args.table).write_text("\n".join(lines) + "\n")
        print("\n".join(lines))
    print(f"{t.passed} passed, {t.failed} failed")
    return 0 if t.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
