"""Model provisioning refuses weights that are not the upstream all-MiniLM-L6-v2, and says what to do."""

from __future__ import annotations

import hashlib

import pytest

from retrieval.errors import ModelProvisionError
from retrieval.provision import WEIGHTS_FILE, verify_weights


def test_missing_or_tampered_weights_are_a_clear_error_and_checked_again_after_a_change(tmp_path):
    with pytest.raises(ModelProvisionError, match="missing; run `make setup`"):
        verify_weights(tmp_path)
    weights = tmp_path / WEIGHTS_FILE
    weights.write_bytes(b"real weights")
    expected = hashlib.sha256(b"real weights").hexdigest()
    verify_weights(tmp_path, expected)
    verify_weights(tmp_path, expected)  # remembered while the file is unchanged
    weights.write_bytes(b"tampered weights!")
    with pytest.raises(ModelProvisionError, match=r"has sha256 .* expected .*delete .* and run `make setup` again"):
        verify_weights(tmp_path, expected)
