"""The one CSV reader refuses what is not CSV text, naming the file and the line."""

from __future__ import annotations

import pytest

from contrastgen.errors import InputError
from contrastgen.files.csv_reading import csv_rows


@pytest.mark.parametrize("delimiter", [",", "\t"])
def test_a_nul_byte_in_a_cell_is_refused_naming_the_line(tmp_path, delimiter):
    path = tmp_path / "scores.csv"
    rows = ["image_id,caption_id,score", "1,a,0.5", "\x001,b,0.25"]
    path.write_text("\r\n".join(r.replace(",", delimiter) for r in rows) + "\r\n", encoding="utf-8")
    with pytest.raises(InputError) as err, csv_rows(path, delimiter=delimiter) as reader:
        list(reader)
    assert "NUL" in str(err.value) and "line 3" in str(err.value) and "scores.csv" in str(err.value)


def test_a_file_without_nul_bytes_reads_as_before(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text('image_id,caption_id,score\r\n1,"a, quoted\r\ncell",0.5\r\n', encoding="utf-8")
    with csv_rows(path) as reader:
        assert list(reader) == [{"image_id": "1", "caption_id": "a, quoted\r\ncell", "score": "0.5"}]
