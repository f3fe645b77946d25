#!/usr/bin/env bash
# Makes the certificates for a cluster that uses TLS (dnnc-node --tls-cert/--tls-key/--tls-ca):
#   scripts/tls_certs.sh DIR NAME ADDRESS...
# creates the cluster's CA in DIR (ca.pem, ca.key; once, kept on later calls) and a
# certificate NAME.pem with its key NAME.key, signed by that CA, valid for every ADDRESS
# (IP addresses or host names: a node is checked against the address its peers call it by).
# Give every node its own NAME and addresses; give clients DIR/ca.pem (dnnc --tls-ca).
set -euo pipefail
if [ $# -lt 3 ]; then
  echo "usage: $0 DIR NAME ADDRESS..." >&2
  exit 2
fi
dir=$1 name=$2
shift 2
mkdir -p "$dir"
umask 077
if [ ! -f "$dir/ca.pem" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3650 \
    -subj "/CN=dnnc cluster CA" -keyout "$dir/ca.key" -out "$dir/ca.pem" 2>/dev/null
fi
san=""
for address in "$@"; do
  if [[ $address =~ ^[0-9.]+$ || $address == *:* ]]; then san+="${san:+,}IP:$address"; else san+="${san:+,}DNS:$address"; fi
done
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$name" \
  -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null
openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial -days 825 \
  -extfile <(printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth,clientAuth\n' "$san") \
  -out "$dir/$name.pem" 2>/dev/null
rm -f "$dir/$name.csr"
chmod 644 "$dir/ca.pem" "$dir/$name.pem"
echo "$dir/$name.pem, $dir/$name.key (for $*), CA $dir/ca.pem"
