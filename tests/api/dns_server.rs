//! A real DNS server on a local UDP port, for DNS monitors: it answers A
//! queries for one name with the address the test sets (or NXDOMAIN when
//! none is set), and counts the queries it got.

use hickory_proto::op::{Message, ResponseCode};
use hickory_proto::rr::{RData, Record, RecordType};
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use tokio::net::UdpSocket;
use tokio_util::sync::CancellationToken;

pub struct DnsServer {
    pub addr: SocketAddr,
    answer: Arc<Mutex<Option<Ipv4Addr>>>,
    queries: Arc<Mutex<usize>>,
    stop: CancellationToken,
}

impl DnsServer {
    /// Answers A queries for `name` (any case, with or without the final
    /// dot) with `answer`.
    pub async fn start(name: &str, answer: Ipv4Addr) -> DnsServer {
        let sock = UdpSocket::bind("127.0.0.1:0").await.expect("bind udp");
        let addr = sock.local_addr().expect("addr");
        let answer = Arc::new(Mutex::new(Some(answer)));
        let queries = Arc::new(Mutex::new(0));
        let stop = CancellationToken::new();
        let (a, q, until) = (answer.clone(), queries.clone(), stop.clone());
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        tokio::spawn(async move {
            let mut buf = [0u8; 1500];
            loop {
                let (n, peer) = tokio::select! {
                    _ = until.cancelled() => return,
                    r = sock.recv_from(&mut buf) => match r { Ok(x) => x, Err(_) => return },
                };
                let Ok(query) = Message::from_vec(&buf[..n]) else {
                    continue;
                };
                *q.lock().expect("lock") += 1;
                let mut reply = Message::response(query.metadata.id, query.metadata.op_code);
                reply.metadata.recursion_desired = query.metadata.recursion_desired;
                reply.metadata.recursion_available = true;
                let current = *a.lock().expect("lock");
                for question in &query.queries {
                    reply.add_query(question.clone());
                    let asked = question.name().to_string();
                    let matches = asked.trim_end_matches('.').to_ascii_lowercase() == name;
                    match (matches, current, question.query_type()) {
                        (true, Some(ip), RecordType::A) => {
                            reply.add_answer(Record::from_rdata(
                                question.name().clone(),
                                60,
                                RData::from(ip),
                            ));
                        }
                        (true, Some(_), _) => {}
                        _ => reply.metadata.response_code = ResponseCode::NXDomain,
                    }
                }
                if let Ok(bytes) = reply.to_vec() {
                    let _ = sock.send_to(&bytes, peer).await;
                }
            }
        });
        DnsServer {
            addr,
            answer,
            queries,
            stop,
        }
    }

    /// Answers this from now on (None: NXDOMAIN).
    pub fn answer(&self, ip: Option<Ipv4Addr>) {
        *self.answer.lock().expect("lock") = ip;
    }

    pub fn queries(&self) -> usize {
        *self.queries.lock().expect("lock")
    }
}

impl Drop for DnsServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
