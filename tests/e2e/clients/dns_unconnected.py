"""DNS questions (type A) from one UDP socket that is never connected, each sent to its server by
address: `dns_unconnected.py sendto|sendmsg ID SERVER=NAME...`. Every question has the same id, so
a test can ask two servers the same id. Prints the server and response code of each answer that
came within 2 s of the last question."""
import select
import socket
import struct
import sys


def question(qid, name):
    labels = b"".join(bytes([len(part)]) + part.encode() for part in name.split("."))
    return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + labels + b"\0" + struct.pack(">HH", 1, 1)


def main():
    api, qid = sys.argv[1], int(sys.argv[2])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for ask in sys.argv[3:]:
        server, name = ask.split("=")
        if api == "sendmsg":
            s.sendmsg([question(qid, name)], [], 0, (server, 53))
        else:
            s.sendto(question(qid, name), (server, 53))
    while select.select([s], [], [], 2)[0]:
        if api == "sendmsg":
            data, _, _, peer = s.recvmsg(4096)
        else:
            data, peer = s.recvfrom(4096)
        print(peer[0], data[3] & 15, flush=True)


if __name__ == "__main__":
    main()
