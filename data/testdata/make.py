"""Writes the reader tests' files with the reference writers: NumPy,
safetensors, pyarrow and Pillow. Run from this folder:
python make.py (needs numpy safetensors pyarrow pillow)."""

import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image
from safetensors.numpy import save_file

x = np.arange(30, dtype=np.float32).reshape(5, 2, 3)
y = np.arange(5, dtype=np.int64) * 10
np.save("x.npy", x)
np.save("y.npy", y)
np.savez_compressed("xy.npz", x=x, y=y)
save_file({"x": x, "y": y}, "xy.safetensors")

table = pa.table({
    "a": pa.array(range(5), pa.int8()),
    "b": pa.array([0.5 * i for i in range(5)], pa.float64()),
    "v": pa.array([[i, i + 1, i + 2] for i in range(5)], pa.list_(pa.float32())),
    "u": pa.array(range(5), pa.uint16()),
    "s": pa.array(["p", "q", "r", "s", "t"]),
})
pq.write_table(table, "table.parquet", row_group_size=2)
pq.write_table(pa.table({"n": pa.array([1.0, None, 3.0])}), "nulls.parquet")
pq.write_table(pa.table({"r": pa.array([[1, 2], [3], [4, 5]], pa.list_(pa.int64()))}), "ragged.parquet")

for cls, name, fmt, shade in [("cat", "a.png", "PNG", 10), ("cat", "b.png", "PNG", 20), ("dog", "c.png", "PNG", 30)]:
    os.makedirs(f"images/{cls}", exist_ok=True)
    px = np.zeros((3, 4, 3), np.uint8)  # height 3, width 4
    px[..., 0] = shade
    px[..., 1] = np.arange(4, dtype=np.uint8)[None, :]
    px[..., 2] = np.arange(3, dtype=np.uint8)[:, None]
    Image.fromarray(px).save(f"images/{cls}/{name}", fmt)
os.makedirs("images/dog", exist_ok=True)
Image.fromarray(np.full((3, 4, 3), 7, np.uint8)).save("images/dog/d.jpg", "JPEG", quality=100)
os.makedirs("odd/one", exist_ok=True)
Image.fromarray(np.zeros((3, 4, 3), np.uint8)).save("odd/one/a.png")
Image.fromarray(np.zeros((5, 4, 3), np.uint8)).save("odd/one/b.png")
