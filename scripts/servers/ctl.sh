#!/usr/bin/env bash
# Starts, stops, kills and restarts the lease stores' test servers on 127.0.0.1 at
# non-default ports, with all state under $FF_SERVERS_DIR (make it with mktemp -d, and
# call `ctl.sh stop-all` from a trap ... EXIT).
#
#   ctl.sh start NAME     start (or restart on the same data dir), wait until it answers
#   ctl.sh kill NAME      kill -9 (a crash); the data dir stays for a restart
#   ctl.sh stop NAME      graceful stop
#   ctl.sh stop-all       stop every server started here
#   ctl.sh url NAME       the store address the lease or segment code uses
#
# NAME is etcd, redis, zookeeper, postgres or mysql (MariaDB). Ports: etcd 12379 (peer
# 12380), Redis 16379, ZooKeeper 12181, PostgreSQL 15432, MariaDB 13306, each plus
# $FF_PORT_OFFSET (default 0), so that two sets of servers can run side by side.
set -euo pipefail
: "${FF_SERVERS_DIR:?set FF_SERVERS_DIR to a directory from mktemp -d}"
cmd=${1:?usage: ctl.sh start|kill|stop|url NAME | stop-all}
name=${2:-}
dir="$FF_SERVERS_DIR/$name"
pidfile="$FF_SERVERS_DIR/$name.pid"
log="$FF_SERVERS_DIR/$name.log"
pgbin() { ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1; }

# Polls `check` up to 30 s; prints the log on failure.
wait_ready() {
  for _ in $(seq 1 150); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  echo "ctl.sh: $name did not become ready; log:" >&2
  tail -30 "$log" >&2 || true
  return 1
}

# `ruok` answers before the server serves sessions; `srvr` shows a Mode only once it does.
off=${FF_PORT_OFFSET:-0}
zk_ok() { (exec 3<>/dev/tcp/127.0.0.1/$((12181 + off)) && printf srvr >&3 && timeout 2 cat <&3) | grep -q '^Mode: '; }

port_of() {
  local base
  case $1 in etcd) base=12379 ;; redis) base=16379 ;; zookeeper) base=12181 ;; postgres) base=15432 ;; mysql) base=13306 ;; *) return ;; esac
  echo $((base + off))
}

# True if something listens on 127.0.0.1:$1.
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

start() {
  local port; port=$(port_of "$name")
  if [ -n "$port" ] && listening "$port"; then
    echo "ctl.sh: port $port is taken (another $name test server running?); stop it first" >&2
    exit 1
  fi
  mkdir -p "$dir"
  case $name in
    etcd)
      etcd --name default --data-dir "$dir" \
        --listen-client-urls "http://127.0.0.1:$port" --advertise-client-urls "http://127.0.0.1:$port" \
        --listen-peer-urls "http://127.0.0.1:$((port + 1))" --initial-advertise-peer-urls "http://127.0.0.1:$((port + 1))" \
        --initial-cluster "default=http://127.0.0.1:$((port + 1))" >>"$log" 2>&1 &
      echo $! >"$pidfile"
      wait_ready etcdctl --endpoints="127.0.0.1:$port" --command-timeout=1s endpoint health ;;
    redis)
      # No persistence: a restart loses every key, the case the registry must survive.
      redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" --save '' --appendonly no \
        --daemonize no >>"$log" 2>&1 &
      echo $! >"$pidfile"
      wait_ready redis-cli -p "$port" ping ;;
    zookeeper)
      # tickTime 500 ms lets sessions be as short as 1 s.
      cat >"$FF_SERVERS_DIR/zoo.cfg" <<CFG
tickTime=500
dataDir=$dir
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=srvr
CFG
      java -Xmx256m -Dzookeeper.log.dir="$FF_SERVERS_DIR" \
        -cp /etc/zookeeper/conf:/usr/share/java/zookeeper.jar \
        org.apache.zookeeper.server.quorum.QuorumPeerMain "$FF_SERVERS_DIR/zoo.cfg" >>"$log" 2>&1 &
      echo $! >"$pidfile"
      wait_ready zk_ok ;;
    postgres)
      local bin; bin=$(pgbin)
      local run=(); [ "$(id -u)" = 0 ] && run=(runuser -u postgres --)
      if [ ! -f "$dir/PG_VERSION" ]; then
        mkdir -p "$FF_SERVERS_DIR/pgsock"
        [ "$(id -u)" = 0 ] && chown postgres "$dir" "$FF_SERVERS_DIR/pgsock" && chmod 755 "$FF_SERVERS_DIR"
        "${run[@]}" "$bin/initdb" -D "$dir" -A trust -U postgres >>"$log" 2>&1
      fi
      "${run[@]}" "$bin/pg_ctl" -D "$dir" -l "$FF_SERVERS_DIR/pgsock/server.log" -w -t 30 \
        -o "-c listen_addresses=127.0.0.1 -p $port -k $FF_SERVERS_DIR/pgsock" start >>"$log" 2>&1
      head -1 "$dir/postmaster.pid" >"$pidfile"
      wait_ready "$bin/pg_isready" -h 127.0.0.1 -p "$port" ;;
    mysql)
      if [ ! -d "$dir/data/mysql" ]; then
        mariadb-install-db --no-defaults --datadir="$dir/data" --auth-root-authentication-method=normal \
          --skip-test-db --user=root >>"$log" 2>&1
      fi
      mariadbd --no-defaults --datadir="$dir/data" --socket="$dir/sock" --port="$port" \
        --bind-address=127.0.0.1 --user=root --skip-log-bin --pid-file="$dir/pid" \
        --innodb-flush-log-at-trx-commit=1 >>"$log" 2>&1 &
      echo $! >"$pidfile"
      wait_ready mariadb --no-defaults -h127.0.0.1 -P"$port" -uroot -e 'select 1'
      mariadb --no-defaults -h127.0.0.1 -P"$port" -uroot -e 'CREATE DATABASE IF NOT EXISTS ferroflake' ;;
    *) echo "ctl.sh: unknown server $name" >&2; exit 64 ;;
  esac
}

kill_hard() {
  [ -f "$pidfile" ] || return 0
  local pid; pid=$(cat "$pidfile")
  kill -9 "$pid" 2>/dev/null || true
  if [ "$name" = postgres ]; then
    # The postmaster's children keep the port until they notice it is gone.
    # (found through /proc, so procps need not be installed)
    for stat in /proc/[0-9]*/stat; do
      read -r child _ _ parent _ <"$stat" 2>/dev/null || continue
      [ "$parent" = "$pid" ] && kill -9 "$child" 2>/dev/null || true
    done
  fi
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rm -f "$pidfile"
  for _ in $(seq 1 50); do listening "$(port_of "$name")" || break; sleep 0.1; done
  [ "$name" != postgres ] || rm -f "$dir/postmaster.pid"
}

stop() {
  [ -f "$pidfile" ] || return 0
  if [ "$name" = postgres ]; then
    local run=(); [ "$(id -u)" = 0 ] && run=(runuser -u postgres --)
    "${run[@]}" "$(pgbin)/pg_ctl" -D "$dir" -m fast -w stop >>"$log" 2>&1 || kill_hard
    rm -f "$pidfile"
    return 0
  fi
  local pid; pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$pidfile"
}

case $cmd in
  start) start ;;
  kill) kill_hard ;;
  stop) stop ;;
  stop-all)
    for n in etcd redis zookeeper postgres mysql; do "$0" stop "$n" || true; done ;;
  url)
    case $name in
      etcd) echo "etcd://127.0.0.1:$(port_of etcd)" ;;
      redis) echo "redis://127.0.0.1:$(port_of redis)/0" ;;
      zookeeper) echo "zk://127.0.0.1:$(port_of zookeeper)" ;;
      postgres) echo "postgres://postgres@127.0.0.1:$(port_of postgres)/postgres" ;;
      mysql) echo "mysql://root@127.0.0.1:$(port_of mysql)/ferroflake" ;;
      *) echo "ctl.sh: unknown server $name" >&2; exit 64 ;;
    esac ;;
  *) echo "ctl.sh: unknown command $cmd" >&2; exit 64 ;;
esac
