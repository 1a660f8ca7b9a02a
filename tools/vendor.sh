#!/usr/bin/env bash
# Refresh _vendor/: the JavaScript the built pages need, taken from the npm registry and trimmed to what they use,
# so that a page opened with no network still typesets math and shows the saved widgets. Run by `make vendor`.
# Versions are pinned here; each package keeps its licence file.
set -euo pipefail
MATHJAX=mathjax@3.2.2
WIDGETS=@jupyter-widgets/html-manager@1.0.6   # the manager for ipywidgets 8 (widget protocol 2)
REQUIREJS=requirejs@2.3.7
AXE=axe-core@4.14.1                            # the accessibility checker of tools/check_a11y.py

root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
npm pack --silent "$MATHJAX" "$WIDGETS" "$REQUIREJS" "$AXE" > /dev/null
for f in *.tgz; do mkdir -p "${f%.tgz}"; tar xzf "$f" -C "${f%.tgz}"; done

out="$root/_vendor"
rm -rf "$out"
mkdir -p "$out/mathjax/input/tex" "$out/mathjax/output/chtml/fonts" "$out/widgets" "$out/requirejs" "$out/axe"

mj=mathjax-3.2.2/package
cp "$mj/LICENSE" "$mj/es5/tex-chtml.js" "$out/mathjax/"
cp -r "$mj/es5/input/tex/extensions" "$out/mathjax/input/tex/"       # loaded on demand by \require and autoload
rm "$out/mathjax/input/tex/extensions/all-packages.js"               # every extension in one file: not used
cp -r "$mj/es5/output/chtml/fonts/woff-v2" "$out/mathjax/output/chtml/fonts/"

hm=jupyter-widgets-html-manager-1.0.6/package
cp "$hm/LICENSE" "$hm/dist/embed-amd.js" "$hm/dist/embed.js.LICENSE.txt" "$out/widgets/"
cp "$hm"/dist/[0-9]*.embed.js "$out/widgets/"                       # chunks that embed-amd.js loads lazily
cp "$hm"/dist/*.woff2 "$out/widgets/"                                # icon fonts; browsers take woff2 first
cp "$root/tools/widgets-setup.js" "$out/widgets/setup.js"            # ours: module path and MathJax 3 shim
# The manager checks the saved widget state against its JSON schema with Ajv in strict mode, which warns (twice on
# every widget page's console) that the schema's union type ["string", "number"] needs allowUnionTypes. The schema
# is right, so the validator is made with that option (in both of the bundle's copies of the manager).
perl -0pi -e 's/(\w+)=new\((\w+)\(\)\)([,;](?:\w+=)?\1\.compile\()/$1=new($2())({allowUnionTypes:!0})$3/g' \
  "$out/widgets/embed-amd.js"
test "$(grep -o 'allowUnionTypes:!0' "$out/widgets/embed-amd.js" | wc -l)" = 2 || {
  echo "vendor.sh: the html-manager's Ajv set-up has changed; update the allowUnionTypes patch" >&2; exit 1; }

rj=requirejs-2.3.7/package
cp "$rj/require.js" "$out/requirejs/"
sed -n '1,/\*\//p' "$rj/require.js" > "$out/requirejs/LICENSE"       # the licence header of require.js (MIT)

ax=axe-core-4.14.1/package
cp "$ax/axe.min.js" "$ax/LICENSE" "$ax/LICENSE-3RD-PARTY.txt" "$out/axe/"  # injected by check_a11y, never by a page

du -sh "$out"
