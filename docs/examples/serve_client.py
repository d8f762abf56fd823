"""A client of `elmo-serve`: posts sentences, prints each one's vector size and first values.

elmo-serve --model small=small --port 8000 &
python docs/examples/serve_client.py http://127.0.0.1:8000 "Hello world ." "ELMo serves ."
"""

import json
import sys
import urllib.error
import urllib.request
from typing import List


def embed(server: str, sentences: List[str], model: str = "", pool: str = "none") -> List:
    request = {"sentences": sentences, "pool": pool, **({"model": model} if model else {})}
    posted = urllib.request.Request(
        f"{server}/embed",
        data=json.dumps(request).encode("utf-8"),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(posted) as response:
            return json.load(response)["embeddings"]
    except urllib.error.HTTPError as error:  # a 4xx says what was wrong
        sys.exit(f"{error.code}: {json.load(error)['error']}")


if __name__ == "__main__":
    for sentence, vectors in zip(sys.argv[2:], embed(sys.argv[1], sys.argv[2:])):
        print(f"{sentence!r}: {len(vectors)} tokens, first values {vectors[0][:3]}")
