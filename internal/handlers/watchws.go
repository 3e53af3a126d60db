package handlers

import (
	"context"
	"io"
	"net/http"

	"golang.org/x/net/websocket"
)

// watchOverWebSocket streams a watch over a WebSocket, as kube-apiserver
// does when a watch request asks to upgrade (browsers' clients): each
// event is one message, text for JSON and binary for protobuf, without
// the stream's framing. The client sends nothing; its closing the socket
// ends the watch.
func (a *API) watchOverWebSocket(ctx context.Context, cancel context.CancelFunc, w http.ResponseWriter, r *http.Request, run *watchRun) {
	w.Header().Set("Content-Type", run.info.MediaType)
	websocket.Handler(func(ws *websocket.Conn) {
		defer ws.Close()
		go func() {
			_, _ = io.Copy(io.Discard, ws) // until the client closes
			cancel()
		}()
		a.streamWatch(ctx, cancel, &webSocketResponse{ws: ws, text: run.info.EncodesAsText}, run)
	}).ServeHTTP(w, r)
}

// webSocketResponse is a watch's response over a WebSocket: each write is
// one message.
type webSocketResponse struct {
	ws     *websocket.Conn
	text   bool
	header http.Header
}

func (r *webSocketResponse) Header() http.Header {
	if r.header == nil {
		r.header = http.Header{} // sent with the upgrade already
	}
	return r.header
}

func (r *webSocketResponse) WriteHeader(int) {}

func (r *webSocketResponse) Write(p []byte) (int, error) {
	var err error
	if r.text {
		err = websocket.Message.Send(r.ws, string(p))
	} else {
		err = websocket.Message.Send(r.ws, p)
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush does nothing: each message is sent as it is written.
func (r *webSocketResponse) Flush() {}
