"""Second verifier for tests/sigstore_verify.rs: sigstore-python (PyPI
`sigstore`), offline, with the trusted root each case names.

Reads a JSON list of cases on stdin: {"name", "bundle", "artifact",
"identity", "issuer", "trusted_root"} (paths; "key" cases are not given:
sigstore-python verifies keyless bundles only). Prints one JSON object:
{name: {"verified": bool, "reason": str}}.
"""

import json
import sys

from sigstore.models import Bundle, TrustedRoot
from sigstore.verify import Verifier
from sigstore.verify.policy import Identity


def verify(case):
    try:
        root = TrustedRoot.from_file(case["trusted_root"])
        verifier = Verifier(trusted_root=root)
        with open(case["bundle"], "rb") as f:
            bundle = Bundle.from_json(f.read())
        with open(case["artifact"], "rb") as f:
            artifact = f.read()
        policy = Identity(identity=case["identity"], issuer=case["issuer"])
        if bundle._dsse_envelope is not None:
            # As `sigstore verify`: the envelope's statement must name the artifact.
            _, payload = verifier.verify_dsse(bundle, policy)
            import hashlib

            want = hashlib.sha256(artifact).hexdigest()
            statement = json.loads(payload)
            if not any(
                s.get("digest", {}).get("sha256") == want
                for s in statement.get("subject", [])
            ):
                raise ValueError("no subject matches the artifact")
        else:
            verifier.verify_artifact(artifact, bundle, policy)
        return {"verified": True, "reason": ""}
    except Exception as e:  # every refusal, whatever its class
        return {"verified": False, "reason": f"{type(e).__name__}: {e}"}


def main():
    cases = json.load(sys.stdin)
    print(json.dumps({c["name"]: verify(c) for c in cases}))


if __name__ == "__main__":
    main()
