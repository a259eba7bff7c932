# Copyright 2026 tendon_robot_sim maintainers
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
No other web page in the operator's browser may drive the view (issue 37): a real chromium.

The browser resolves ``attacker.example`` to this machine (``--host-resolver-rules``), as a
DNS-rebinding site makes a browser do. Pages of another site and of another port of this
machine try the view's websocket from their own script, with the messages that would move a
slider; the view's own page, opened with the address the view prints, drives it.
"""

from contextlib import contextmanager
import http.server
import threading

from browser import click, open_page, start_browser, wait_for_text
from hostile_view import camera, set_value
import msgspec
from pages import make_page
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
import viser
import waiting

BROWSER_TIMEOUT = 120.0   # s: a page load on a loaded 2-core machine (test_browser.py)
VERSION = viser.__version__   # the page's websocket names it (viser refuses another)


def wait_for(condition, what: str):
    return waiting.wait_for(condition, what, BROWSER_TIMEOUT)


@pytest.fixture(scope='module')
def browser():
    driver = start_browser(('--host-resolver-rules=MAP attacker.example 127.0.0.1',))
    yield driver
    driver.quit()


@pytest.fixture(scope='module')
def hardware():
    """Serve a view of real hardware on loopback: its token needed."""
    page = make_page(hardware=True)
    yield page
    page.page.close()


@pytest.fixture(scope='module')
def simulated():
    """Serve a simulated robot's view on loopback: no token; Host and Origin still checked."""
    page = make_page()
    yield page
    page.page.close()


def test_the_printed_address_opens_the_page_that_commands(hardware, browser):
    client = open_page(browser, hardware.page)
    thumb = browser.find_element(
        By.XPATH, "//label[text()='t0 [N]']/ancestor::div[.//*[@role='slider']][1]"
        "//*[@role='slider']")
    click(browser, thumb)
    thumb.send_keys(Keys.END)
    wait_for(lambda: hardware.sent, 'a command from the page')
    assert hardware.said.said == []     # nothing a real page sends is refused
    assert client.client_id in hardware.page.server.get_clients()


def test_the_page_without_its_token_is_refused(hardware, browser):
    """Another name of this machine: no cookie there, so only the token would let it in."""
    browser.get(f'http://localhost:{hardware.page.port}/')
    wait_for_text(browser, 'no valid token', 'the refusal in the page')
    browser.get(f'http://localhost:{hardware.page.port}/?token={hardware.page.guard.token}')
    wait_for(lambda: browser.find_elements(By.CSS_SELECTOR, '[role=slider]'),
             'the page with its token')


def test_a_dns_rebinding_page_gets_nothing_even_with_the_token(hardware, browser):
    start = len(hardware.said.said)
    browser.get(f'http://attacker.example:{hardware.page.port}/?token='
                f'{hardware.page.guard.token}')
    wait_for_text(browser, "Host 'attacker.example", 'the refusal in the page')
    # the page and what the browser asks next (its icon): each refused
    assert {kind for kind, _ in hardware.said.since(start)} == {'view refused: request'}


@contextmanager
def attacker_site(html: str):
    """Serve ``html`` on a free port of 127.0.0.1, as another site (or local app) would."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header('Content-Type', 'text/html; charset=utf-8')
            self.end_headers()
            self.wfile.write(html.encode())

        def log_message(self, *args):
            pass
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10.0)


def hijacking_page(port: int, frames: list[bytes]) -> str:
    """Return a page whose script opens the view's websocket and sends ``frames`` (title: how)."""
    arrays = ', '.join(f'new Uint8Array({list(frame)})' for frame in frames)
    return ('<html><body><script>\n'
            f"const socket = new WebSocket('ws://127.0.0.1:{port}/', ['viser-v{VERSION}']);\n"
            "socket.binaryType = 'arraybuffer';\n"
            "document.title = 'connecting';\n"
            "socket.onopen = () => { document.title = 'open'; "
            f'for (const f of [{arrays}]) socket.send(f); }};\n'
            "socket.onerror = () => { document.title = 'error'; };\n"
            "socket.onclose = (event) => { document.title += ' closed ' + event.code; };\n"
            '</script></body></html>')


@pytest.mark.parametrize('site', ['attacker.example', '127.0.0.1'])
def test_a_page_of_another_origin_cannot_open_the_websocket(simulated, browser, site):
    """
    Another site's page, and a page of another port of this machine, are refused.

    The second is the same site as the view (ports do not make sites): its websocket carries
    the view's cookie, so only the Origin check stops it. The view here needs no token: before
    the check, either page moved the slider.
    """
    view = simulated.page
    open_page(browser, view)     # the operator's page: the browser holds its cookie
    uuid = view.commands.sliders['t0']._impl.uuid
    frames = [msgspec.msgpack.encode(camera()), msgspec.msgpack.encode(set_value(uuid, 3.0))]
    start = len(simulated.said.said)
    with attacker_site(hijacking_page(view.port, frames)) as port:
        browser.get(f'http://{site}:{port}/')
        wait_for(lambda: 'closed' in browser.title, 'the websocket of the page closed')
        assert browser.title == 'error closed 1006', browser.title   # never opened
    said = simulated.said.since(start)
    assert [kind for kind, _ in said] == ['view refused: request'], said
    assert f"Origin 'http://{site}:{port}'" in said[0][1]
    assert simulated.sent == []
