//! The application as a service: the routes, behind what every request
//! passes on its way to them. Each request is counted (`telemetry`); a
//! change (anything but GET, HEAD and OPTIONS) is also held to the
//! database's state (`db_gate`) and run again when the database was busy
//! (`retry`). A read needs only the count, so it goes to the routes with
//! nothing boxed or cloned for it: as three `from_fn` layers on the router,
//! these boxed a future, cloned their state (the database handle among it)
//! and cloned the layers below them on every request, the public read path
//! included (docs/performance.md).

use crate::static_copy::StaticCopy;
use crate::telemetry::{Family, Telemetry};
use axum::Router;
use axum::extract::Request;
use axum::http::Method;
use axum::response::Response;
use axum::routing::future::RouteFuture;
use futures_util::future::BoxFuture;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Instant;
use tower::{Service, ServiceExt};
use upstate_store::Db;

/// The routes with their request counting, database gate and retries.
/// One `Arc`: hyper clones the service for every request it hands on.
#[derive(Clone)]
pub struct App(Arc<Parts>);

struct Parts {
    routes: Router,
    telemetry: Arc<Telemetry>,
    db: Db,
}

impl App {
    pub(crate) fn new(routes: Router, telemetry: Arc<Telemetry>, db: Db) -> App {
        App(Arc::new(Parts {
            routes,
            telemetry,
            db,
        }))
    }
}

/// The answer of a service that cannot fail, asked once: how the request
/// gate, the form bridge and the retry run what stands behind them.
pub(crate) async fn answer<S>(inner: S, req: Request) -> Response
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    match inner.oneshot(req).await {
        Ok(res) => res,
        Err(never) => match never {},
    }
}

fn is_read(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

impl Service<Request> for App {
    type Response = Response;
    type Error = Infallible;
    type Future = Counted;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // A router is always ready.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Counted {
        // The static copy's requests are the service asking itself, not
        // traffic.
        let counted = req.extensions().get::<StaticCopy>().is_none();
        let family = Family::of(req.uri().path());
        let answer = if is_read(req.method()) {
            // A router's `call` takes `&mut self` but only clones its
            // inner `Arc`: a clone of ours costs the same.
            Answer::Read(self.0.routes.clone().call(req))
        } else {
            let (routes, db) = (self.0.routes.clone(), self.0.db.clone());
            Answer::Change(Box::pin(async move {
                let method = req.method().clone();
                let change = crate::retry::when_busy(req, routes, family.name());
                crate::db_gate::hold(&db, &method, family.name(), change).await
            }))
        };
        Counted {
            answer,
            count: counted.then(|| (self.0.telemetry.clone(), family, Instant::now())),
        }
    }
}

// The read's future stays inline: boxing it is the allocation per read
// this service is for avoiding.
#[allow(clippy::large_enum_variant)]
enum Answer {
    Read(RouteFuture<Infallible>),
    Change(BoxFuture<'static, Response>),
}

/// A request's answer, counted when it is ready.
pub struct Counted {
    answer: Answer,
    count: Option<(Arc<Telemetry>, Family, Instant)>,
}

impl Future for Counted {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // Both futures are `Unpin` (axum's route future holds its service's
        // future boxed), so no pin projection is needed.
        let this = self.get_mut();
        let res = match &mut this.answer {
            Answer::Read(f) => match ready!(Pin::new(f).poll(cx)) {
                Ok(res) => res,
                Err(never) => match never {},
            },
            Answer::Change(f) => ready!(f.as_mut().poll(cx)),
        };
        if let Some((telemetry, family, started)) = this.count.take() {
            telemetry.request(
                family,
                res.status().as_u16(),
                started.elapsed().as_secs_f64(),
            );
        }
        Poll::Ready(Ok(res))
    }
}
