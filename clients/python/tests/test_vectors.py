"""The shared signature vectors (clients/signature-vectors.json), which Weir's own signer and
the TypeScript client pass too."""

import json
import pathlib
import unittest

from weir_client import verify

VECTORS = json.loads((pathlib.Path(__file__).parents[2] / "signature-vectors.json").read_text())


class Vectors(unittest.TestCase):
    def test_there_are_vectors_to_check(self):
        self.assertGreaterEqual(len(VECTORS["vectors"]), 10)

    def test_each_vector(self):
        now, tolerance = VECTORS["now"], VECTORS["tolerance_seconds"]
        for vector in VECTORS["vectors"]:
            for check in vector["checks"]:
                with self.subTest(vector["name"], secret=check["secret"]):
                    verdict = verify(vector["body"], vector["headers"], check["secret"], now=now, tolerance_seconds=tolerance)
                    self.assertEqual(verdict, check["valid"])
                    # Header names in any case, the body as bytes.
                    shouted = {name.upper(): value for name, value in vector["headers"].items()}
                    self.assertEqual(verify(vector["body"].encode(), shouted, check["secret"], now=now), check["valid"])


if __name__ == "__main__":
    unittest.main()
