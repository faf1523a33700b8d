"""findings_for_judges.py ROUND LINT_JSON: write ROUND/findings.md, the TL1xx findings but TL103, numbered, for a
judge (docs/precision/rounds.md)."""
import json
import pathlib
import sys
from collections import Counter


def main(round_dir: pathlib.Path, lint_json: pathlib.Path) -> None:
    data = json.loads(lint_json.read_text())
    kept = sorted((f for f in data if f["code"].startswith("TL1") and f["code"] != "TL103"),
                  key=lambda f: (f["code"], f["filename"], f["location"]["row"]))
    out = [f"# Findings of round {round_dir.name} to judge ({len(kept)})", "",
           f"Paths are relative to {round_dir / 'src'}.", ""]
    for number, f in enumerate(kept, 1):
        out += [f"## F{number}: {f['code']} {f['name']} ({f['severity']}) at {f['filename']}:{f['location']['row']}",
                "", "Message: " + f["message"]]
        out += ["Note: " + note for note in f.get("notes") or []]
        if f.get("fix"):
            edits = json.dumps(f["fix"].get("edits", ""))[:400]
            out.append(f"Fix offered ({f['fix'].get('applicability', '')}): {edits}")
        out.append("")
    (round_dir / "findings.md").write_text("\n".join(out) + "\n")
    print(round_dir.name, len(kept), dict(Counter(f["code"] for f in kept)),
          "TL103", sum(f["code"] == "TL103" for f in data))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]))
