#!/bin/sh
# A CA of your own and a console certificate for NAME (docs/guides/fleet.md), written into
# deploy/certs/ (or $CERTS_DIR). Guards trust it with PAGEWARDEN_CONSOLE_CA=certs/ca.pem, people
# import certs/ca.pem into their browser. With a certificate from your organisation's CA or from
# ACME, put console.pem (the chain) and console-key.pem into certs/ instead.
set -eu
NAME="${1:?usage: ./make-certs.sh CONSOLE_HOST_NAME}"
OUT="${CERTS_DIR:-$(dirname "$0")/certs}"
mkdir -p "$OUT"
cd "$OUT"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 825 \
  -subj "/CN=pagewarden fleet CA" -keyout ca-key.pem -out ca.pem \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
  -subj "/CN=$NAME" -keyout console-key.pem -out console.csr
printf "subjectAltName=DNS:%s\nextendedKeyUsage=serverAuth\n" "$NAME" > console.ext
openssl x509 -req -in console.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial \
  -days 825 -out console.pem -extfile console.ext
rm console.csr console.ext
chmod 644 console-key.pem  # the console's user in the container reads it: keep the directory private
echo "wrote ca.pem, console.pem, console-key.pem for $NAME"
