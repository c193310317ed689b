# Sourced by the benchmark scripts: a Debian docker-registry on loopback.
#
# start_registry DIR: starts /usr/bin/docker-registry on a free loopback
# port, its config, storage and log under DIR (created); waits until it
# answers; sets HOST (127.0.0.1:PORT) and REGISTRY_PID. The caller kills it.
start_registry() {
    local dir=$1 port
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    mkdir -p "$dir/storage"
    cat > "$dir/config.yml" <<YAML
version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $dir/storage
http:
  addr: 127.0.0.1:$port
YAML
    /usr/bin/docker-registry serve "$dir/config.yml" > "$dir/log" 2>&1 &
    REGISTRY_PID=$!
    for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/v2/" > /dev/null && break; sleep 0.1; done
    HOST=127.0.0.1:$port
}
